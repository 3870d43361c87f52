package okx

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Asset history endpoints (deposit-history, withdrawal-history, convert/history) answer newest first, at most
// walletPageLimit rows, with after (older than, ms) and before (newer than, ms).
const (
	walletPageLimit = 100
	// walletPageCalls bounds the calls one page may take when rows share a timestamp across OKX pages.
	walletPageCalls = 10
)

// tsCursor is the position of the last row a page returned: its time and id. Rows are ordered newest first and,
// within one millisecond, as OKX lists them.
type tsCursor struct {
	ts int64
	id string
}

func (c tsCursor) String() string { return strconv.FormatInt(c.ts, 10) + ":" + c.id }

func parseTsCursor(s string) (tsCursor, error) {
	t, id, ok := strings.Cut(s, ":")
	ts, err := strconv.ParseInt(t, 10, 64)
	if !ok || err != nil || ts < 0 || id == "" {
		return tsCursor{}, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "cursor", "cursor %q was not made by this plugin", s)
	}
	return tsCursor{ts, id}, nil
}

// timePage reads the newest `limit` rows of [start_time, end_time] older than the page's cursor from an asset
// history endpoint, and the cursor of the next page ("" once the range is exhausted). Rows in the same
// millisecond are told apart by id, so no row is missed or repeated when a page ends inside such a group.
func timePage[T any](ctx context.Context, s *Server, creds *Credentials, path string, base url.Values, p *exchangev1.HistoryPage,
	rowTs func(T) (int64, error), rowID func(T) string) ([]T, string, error) {
	limit := int(p.GetLimit())
	if limit <= 0 || limit > walletPageLimit {
		limit = walletPageLimit
	}
	var at *tsCursor // rows at or above this position are skipped
	if p.GetCursor() != "" {
		c, err := parseTsCursor(p.GetCursor())
		if err != nil {
			return nil, "", err
		}
		at = &c
	}
	upper := int64(0) // exclusive upper bound for OKX's after; 0 none
	if p.GetEndTime() > 0 {
		upper = p.GetEndTime() + 1
	}
	var out []T
	var ts []int64
	for range walletPageCalls {
		q := url.Values{}
		for k, v := range base {
			q[k] = v
		}
		q.Set("limit", strconv.Itoa(walletPageLimit))
		after := upper
		if at != nil && (after == 0 || at.ts+1 < after) {
			after = at.ts + 1
		}
		if after > 0 {
			q.Set("after", msStr(after))
		}
		if p.GetStartTime() > 0 {
			q.Set("before", msStr(p.GetStartTime()-1))
		}
		data, err := s.client().Get(ctx, path, q, creds)
		if err != nil {
			return nil, "", err
		}
		rows, err := decodeList[T](data)
		if err != nil {
			return nil, "", internalf("%s: %v", path, err)
		}
		passed := at == nil
		progressed := false
		var last *tsCursor
		for _, r := range rows {
			t, err := rowTs(r)
			if err != nil {
				return nil, "", internalf("%s: %v", path, err)
			}
			last = &tsCursor{t, rowID(r)}
			switch {
			case (after > 0 && t >= after) || t < p.GetStartTime():
				continue // outside the range asked for
			case !passed && t == at.ts:
				passed = last.id == at.id // skip the group up to and including the cursor's row
				continue
			}
			passed = true
			out, ts = append(out, r), append(ts, t)
			progressed = true
		}
		if len(out) > limit {
			return out[:limit], tsCursor{ts[limit-1], rowID(out[limit-1])}.String(), nil
		}
		if len(rows) < walletPageLimit || last == nil || !progressed && at != nil && last.ts == at.ts && last.id == at.id {
			return out, "", nil // the range is exhausted
		}
		at = last
	}
	if len(out) == 0 {
		return nil, "", nil
	}
	// The call budget ran out with the range not exhausted: the next page continues after the last row.
	return out, tsCursor{ts[len(ts)-1], rowID(out[len(out)-1])}.String(), nil
}
