package account

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/store"
)

// PreferencesDoc is the member's system preferences.
type PreferencesDoc struct {
	Theme       string            `json:"theme,omitempty" enum:"dark,light"`
	Language    string            `json:"language,omitempty" maxLength:"16" doc:"A BCP 47 tag such as en or ja"`
	Alerts      map[string]bool   `json:"alerts,omitempty" doc:"Alert switches by name (at most 64)"`
	SoundVolume string            `json:"sound_volume,omitempty" pattern:"^(0(\\.[0-9]{1,4})?|1(\\.0{1,4})?)$" doc:"A decimal from 0 to 1, as a string"`
	SubPages    map[string]string `json:"sub_pages,omitempty" doc:"The sub-page last shown per page (at most 64)"`
	Trade       *TradePrefs       `json:"trade,omitempty" doc:"The trade screen's chart layout and account-tab switches"`
	// HideBalances is the eye on the home's balance card.
	HideBalances bool `json:"hide_balances,omitempty" doc:"Balances are masked until shown again (the eye on the home's balance card)"`
}

// TradePrefs is the trade screen's saved state.
type TradePrefs struct {
	ChartType     *int      `json:"chart_type,omitempty" minimum:"0" maximum:"16" doc:"The spec's chart type key (Bars 0, Candles 1, Line 2, Area 3, HeikinAshi 8, HollowCandles 9, Baseline 10, HighLow 12, Columns 13, LineWithMarkers 14, StepLine 15, HLCArea 16)"`
	Interval      string    `json:"interval,omitempty" maxLength:"16" doc:"The chart's resolution code, such as 1m, 4h or 1D"`
	Indicators    *[]string `json:"indicators,omitempty" maxItems:"16" doc:"The chart's indicators (such as MA, VOL); empty is none, absent the default"`
	PositionsAll  bool      `json:"positions_all,omitempty" doc:"The positions tab lists every symbol"`
	OpenOrdersAll bool      `json:"open_orders_all,omitempty" doc:"The open orders tab lists every symbol"`
	DepthSteps    int       `json:"depth_steps,omitempty" enum:"1,10,100,1000" doc:"The order book's price grouping in ticks (the depth decimal)"`
}

func (d PreferencesDoc) store() store.PreferencesDoc {
	out := store.PreferencesDoc{Theme: d.Theme, Language: d.Language, Alerts: d.Alerts, SoundVolume: d.SoundVolume,
		SubPages: d.SubPages, HideBalances: d.HideBalances}
	if t := d.Trade; t != nil {
		out.Trade = &store.TradePrefs{ChartType: t.ChartType, Interval: t.Interval, Indicators: t.Indicators,
			PositionsAll: t.PositionsAll, OpenOrdersAll: t.OpenOrdersAll, DepthSteps: t.DepthSteps}
	}
	return out
}

func prefsOf(d store.PreferencesDoc) PreferencesDoc {
	out := PreferencesDoc{Theme: d.Theme, Language: d.Language, Alerts: d.Alerts, SoundVolume: d.SoundVolume,
		SubPages: d.SubPages, HideBalances: d.HideBalances}
	if t := d.Trade; t != nil {
		out.Trade = &TradePrefs{ChartType: t.ChartType, Interval: t.Interval, Indicators: t.Indicators,
			PositionsAll: t.PositionsAll, OpenOrdersAll: t.OpenOrdersAll, DepthSteps: t.DepthSteps}
	}
	return out
}

// Preferences is the stored document with its version (0: never saved).
type Preferences struct {
	Version     int64          `json:"version" doc:"Increases with every save; 0 before the first. The ETag is \"v<version>\""`
	UpdatedAt   *time.Time     `json:"updated_at,omitempty"`
	Preferences PreferencesDoc `json:"preferences"`
}

// PreferencesPut replaces the document.
type PreferencesPut struct {
	Version     *int64         `json:"version,omitempty" minimum:"0" doc:"The version the change is based on, when the If-Match header is not sent"`
	Preferences PreferencesDoc `json:"preferences"`
}

type prefsReply struct {
	CacheControl string `header:"Cache-Control"`
	ETag         string `header:"ETag"`
	Body         Preferences
}

func etag(v int64) string { return `"v` + strconv.FormatInt(v, 10) + `"` }

// parseETag reads an If-Match value written by etag (weak or strong).
func parseETag(s string) (int64, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "W/")
	if !strings.HasPrefix(s, `"v`) || !strings.HasSuffix(s, `"`) || len(s) < 4 {
		return 0, false
	}
	v, err := strconv.ParseInt(s[2:len(s)-1], 10, 64)
	return v, err == nil && v >= 0
}

func (r *routes) registerPreferences(api huma.API) {
	const path = "/api/v1/me/preferences"
	huma.Register(api, r.op("get-preferences", http.MethodGet, path, "The member's preferences",
		"Theme, language, alerts, sound volume, remembered sub-pages and the trade screen's chart layout, with the version as ETag."), r.getPrefs)
	huma.Register(api, r.op("put-preferences", http.MethodPut, path, "Save the member's preferences",
		"Replaces the document. Optimistic concurrency: send If-Match with the ETag of the version the change is "+
			"based on (or version in the body; \"v0\" / 0 before the first save). 412 when another change came "+
			"first (GET again and retry); 428 without either.",
		http.StatusPreconditionFailed, http.StatusPreconditionRequired, http.StatusUnprocessableEntity), r.putPrefs)
}

func prefsBody(p store.Preferences) Preferences {
	out := Preferences{Version: p.Version, Preferences: prefsOf(p.Doc)}
	if !p.UpdatedAt.IsZero() {
		t := p.UpdatedAt.UTC()
		out.UpdatedAt = &t
	}
	return out
}

func (r *routes) getPrefs(ctx context.Context, _ *struct{}) (*prefsReply, error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	p, err := r.Members.Store().Preferences(ctx, m.ID)
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return &prefsReply{CacheControl: noStore, ETag: etag(p.Version), Body: prefsBody(p)}, nil
}

func (r *routes) putPrefs(ctx context.Context, in *struct {
	IfMatch string `header:"If-Match" doc:"The ETag of the version the change is based on"`
	Body    PreferencesPut
}) (*prefsReply, error) {
	m, _, err := r.member(ctx)
	if err != nil {
		return nil, err
	}
	var expected int64
	switch {
	case in.IfMatch != "":
		v, good := parseETag(in.IfMatch)
		if !good {
			return nil, problem(http.StatusPreconditionFailed, CodePreconditionFailed, "If-Match is not an ETag of these preferences")
		}
		expected = v
	case in.Body.Version != nil:
		expected = *in.Body.Version
	default:
		return nil, problem(http.StatusPreconditionRequired, CodePreconditionNeeded, "send If-Match (or version) with the version the change is based on")
	}
	p, err := r.Members.Store().PutPreferences(ctx, m.ID, in.Body.Preferences.store(), expected)
	if errors.Is(err, store.ErrConflict) {
		return nil, problem(http.StatusPreconditionFailed, CodePreconditionFailed, "the preferences changed since that version; load them again")
	}
	if err != nil {
		return nil, r.fail(ctx, err)
	}
	return &prefsReply{CacheControl: noStore, ETag: etag(p.Version), Body: prefsBody(p)}, nil
}
