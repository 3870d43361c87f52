package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Preferences are a member's system settings, stored as one JSON document.
type Preferences struct {
	Doc PreferencesDoc
	// Version counts writes: 0 means never stored (Doc is then the zero document). Put needs the version it read.
	Version   int64
	UpdatedAt time.Time
}

// PreferencesDoc is the stored document. Unknown keys are refused, so every field is named here.
type PreferencesDoc struct {
	Theme    string `json:"theme,omitempty"`    // "dark" or "light"
	Language string `json:"language,omitempty"` // a BCP 47 tag, such as "en" or "ja"
	// Alerts switches alert kinds on or off by name (such as "price", "order_filled").
	Alerts map[string]bool `json:"alerts,omitempty"`
	// SoundVolume is a decimal string from 0 to 1, such as "0.5".
	SoundVolume string `json:"sound_volume,omitempty"`
	// SubPages remembers the last sub-page per page, such as {"dashboard": "security"}.
	SubPages map[string]string `json:"sub_pages,omitempty"`
	// Trade is the trade screen's chart layout and state.
	Trade *TradePrefs `json:"trade,omitempty"`
	// HideBalances masks the member's balances and figures (the home's estimated balance) until shown again.
	HideBalances bool `json:"hide_balances,omitempty"`
}

// TradePrefs is the trade screen's saved state: the chart's type, interval and indicators, the account tabs'
// "all symbols" switches and the order book's grouping.
type TradePrefs struct {
	// ChartType is the spec's chart type key (Bars 0, Candles 1, ... HLCArea 16).
	ChartType *int `json:"chart_type,omitempty"`
	// Interval is a resolution code such as "1m", "4h", "1D".
	Interval string `json:"interval,omitempty"`
	// Indicators are the chart's indicator names (such as "MA", "VOL"); empty is none, absent the default.
	Indicators *[]string `json:"indicators,omitempty"`
	// PositionsAll and OpenOrdersAll: the positions / open orders tabs list every symbol, not only the shown one.
	PositionsAll  bool `json:"positions_all,omitempty"`
	OpenOrdersAll bool `json:"open_orders_all,omitempty"`
	// DepthSteps is the order book's price grouping in ticks (the spec's depth decimal): 1, 10, 100 or 1000.
	DepthSteps int `json:"depth_steps,omitempty"`
}

// Limits of the trade preferences.
const (
	maxTradeChartType  = 16
	maxTradeIndicators = 16
	maxTradeNameLen    = 16
)

// Validate checks the trade preferences' values and sizes.
func (t *TradePrefs) Validate() error {
	if t == nil {
		return nil
	}
	if t.ChartType != nil && (*t.ChartType < 0 || *t.ChartType > maxTradeChartType) {
		return fmt.Errorf("%w: trade.chart_type %d is not a chart type key (0 to %d)", ErrInvalid, *t.ChartType, maxTradeChartType)
	}
	switch t.DepthSteps {
	case 0, 1, 10, 100, 1000:
	default:
		return fmt.Errorf("%w: trade.depth_steps %d is not 1, 10, 100 or 1000", ErrInvalid, t.DepthSteps)
	}
	if len(t.Interval) > maxTradeNameLen {
		return fmt.Errorf("%w: trade.interval %q", ErrInvalid, t.Interval)
	}
	if t.Indicators == nil {
		return nil
	}
	if len(*t.Indicators) > maxTradeIndicators {
		return fmt.Errorf("%w: at most %d trade.indicators", ErrInvalid, maxTradeIndicators)
	}
	for _, n := range *t.Indicators {
		if n == "" || len(n) > maxTradeNameLen {
			return fmt.Errorf("%w: trade indicator %q", ErrInvalid, n)
		}
	}
	return nil
}

// Limits on a preferences document.
const (
	MaxPreferencesBytes = 16 << 10
	maxPrefsMapEntries  = 64
	maxPrefsKeyLen      = 64
)

// Validate checks values and sizes.
func (d PreferencesDoc) Validate() error {
	switch d.Theme {
	case "", "dark", "light":
	default:
		return fmt.Errorf("%w: theme %q is neither dark nor light", ErrInvalid, d.Theme)
	}
	if len(d.Language) > MaxLocaleLen {
		return fmt.Errorf("%w: language %q", ErrInvalid, d.Language)
	}
	if d.SoundVolume != "" {
		v, err := decimal.NewFromString(d.SoundVolume)
		if err != nil || v.IsNegative() || v.GreaterThan(decimal.NewFromInt(1)) {
			return fmt.Errorf("%w: sound_volume %q is not a decimal from 0 to 1", ErrInvalid, d.SoundVolume)
		}
	}
	if len(d.Alerts) > maxPrefsMapEntries || len(d.SubPages) > maxPrefsMapEntries {
		return fmt.Errorf("%w: at most %d alerts and sub-pages", ErrInvalid, maxPrefsMapEntries)
	}
	for k := range d.Alerts {
		if k == "" || len(k) > maxPrefsKeyLen {
			return fmt.Errorf("%w: alert name %q", ErrInvalid, k)
		}
	}
	for k, v := range d.SubPages {
		if k == "" || len(k) > maxPrefsKeyLen || len(v) > 256 {
			return fmt.Errorf("%w: sub-page %q", ErrInvalid, k)
		}
	}
	return d.Trade.Validate()
}

// DecodePreferences parses a document strictly (unknown keys and trailing data refused) and validates it.
func DecodePreferences(b []byte) (PreferencesDoc, error) {
	if len(b) > MaxPreferencesBytes {
		return PreferencesDoc{}, fmt.Errorf("%w: preferences larger than %d bytes", ErrInvalid, MaxPreferencesBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d PreferencesDoc
	if err := dec.Decode(&d); err != nil {
		return PreferencesDoc{}, fmt.Errorf("%w: preferences: %v", ErrInvalid, err)
	}
	if dec.More() {
		return PreferencesDoc{}, fmt.Errorf("%w: preferences: data after the document", ErrInvalid)
	}
	return d, d.Validate()
}

// Preferences returns the member's preferences; Version 0 when none were stored yet.
func (s *Store) Preferences(ctx context.Context, memberID string) (Preferences, error) {
	var doc string
	var p Preferences
	var at int64
	err := s.r().row(ctx, "SELECT doc, version, updated_at FROM preferences WHERE member_id = ?", memberID).
		Scan(&doc, &p.Version, &at)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := s.member(ctx, s.r(), memberID); err != nil {
			return Preferences{}, err
		}
		return Preferences{}, nil
	}
	if err != nil {
		return Preferences{}, fmt.Errorf("store: preferences: %w", err)
	}
	if err := json.Unmarshal([]byte(doc), &p.Doc); err != nil {
		return Preferences{}, fmt.Errorf("store: preferences of %q do not parse: %w", memberID, err)
	}
	p.UpdatedAt = fromMicros(at)
	return p, nil
}

// PutPreferences replaces the document if the stored version is still expectedVersion (0: none stored yet) and
// returns the new state. A stale version gets ErrConflict: read again, merge, retry.
func (s *Store) PutPreferences(ctx context.Context, memberID string, doc PreferencesDoc, expectedVersion int64) (Preferences, error) {
	if err := doc.Validate(); err != nil {
		return Preferences{}, err
	}
	if expectedVersion < 0 {
		return Preferences{}, fmt.Errorf("%w: version %d", ErrInvalid, expectedVersion)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return Preferences{}, fmt.Errorf("store: preferences: %w", err)
	}
	if len(b) > MaxPreferencesBytes {
		return Preferences{}, fmt.Errorf("%w: preferences larger than %d bytes", ErrInvalid, MaxPreferencesBytes)
	}
	at := s.stamp()
	var res sql.Result
	if expectedVersion == 0 {
		res, err = s.w().exec(ctx, `INSERT INTO preferences (member_id, doc, version, updated_at) VALUES (?, ?, 1, ?)
			ON CONFLICT (member_id) DO NOTHING`, memberID, string(b), micros(at))
		if isForeignKey(err) {
			return Preferences{}, fmt.Errorf("%w: member %q", ErrNotFound, memberID)
		}
	} else {
		res, err = s.w().exec(ctx, `UPDATE preferences SET doc = ?, version = version + 1, updated_at = ?
			WHERE member_id = ? AND version = ?`, string(b), micros(at), memberID, expectedVersion)
	}
	if err != nil {
		return Preferences{}, fmt.Errorf("store: put preferences: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Preferences{}, fmt.Errorf("store: put preferences: %w", err)
	}
	if n == 0 {
		if _, err := s.member(ctx, s.w(), memberID); err != nil {
			return Preferences{}, err
		}
		return Preferences{}, fmt.Errorf("%w: preferences changed since version %d", ErrConflict, expectedVersion)
	}
	return Preferences{Doc: doc, Version: expectedVersion + 1, UpdatedAt: at}, nil
}
