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
// millisecond are told apart by id, so no row is missed or repeated when a page ends inside such a group. keep
// (nil: every row) picks the rows the caller wants; the others only move the position on.
func timePage[T any](ctx context.Context, s *Server, creds *Credentials, path string, base url.Values, p *exchangev1.HistoryPage,
	key func(T) (ts, id string), keep func(T) bool) ([]T, string, error) {
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
	var pos []tsCursor // each returned row's position
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
		rows, err := call[T](ctx, s, path, q, creds)
		if err != nil {
			return nil, "", err
		}
		passed := at == nil
		progressed := false
		var last *tsCursor
		for _, r := range rows {
			tss, id := key(r)
			t, err := parseMs("ts", tss)
			if err != nil {
				return nil, "", internalf("%s: %v", path, err)
			}
			last = &tsCursor{t, id}
			switch {
			case (after > 0 && t >= after) || t < p.GetStartTime():
				continue // outside the range asked for
			case !passed && t == at.ts:
				passed = last.id == at.id // skip the group up to and including the cursor's row
				continue
			}
			passed = true
			progressed = true
			if keep == nil || keep(r) {
				out, pos = append(out, r), append(pos, *last)
			}
		}
		if len(out) > limit {
			return out[:limit], pos[limit-1].String(), nil
		}
		if len(rows) < walletPageLimit || last == nil || !progressed && at != nil && last.ts == at.ts && last.id == at.id {
			return out, "", nil // the range is exhausted
		}
		at = last
	}
	// The call budget ran out with the range not exhausted: the next page continues after the last row read (every
	// row above it was returned or is not wanted), even when this page holds none.
	return out, at.String(), nil
}

// Algo order lists (orders-algo-pending, orders-algo-history) answer newest first by algoId, at most
// algoPageLimit rows, with after (older than that algoId) and no time filter.
const (
	algoPageLimit = 100
	// algoPageCalls bounds the calls one page may take.
	algoPageCalls = 12
)

// cmpID orders OKX's numeric ids (algoId, ordId) by value.
func cmpID(a, b string) int {
	if len(a) != len(b) {
		return cmpInt(int64(len(a)), int64(len(b)))
	}
	return strings.Compare(a, b)
}

func validID(s string) bool {
	if s == "" || len(s) > 32 || s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// idSource is one list read with after=algoId: its rows not merged yet and where it continues.
type idSource struct {
	path  string
	query url.Values
	buf   []rawAlgo
	after string // the smallest algoId read so far; "" before the first call
	done  bool
}

// algoPage merges algo order lists newest first (by algoId) into the newest `limit` rows of [start_time,
// end_time] (by cTime) older than the page's cursor, and gives the cursor of the next page ("" once every list
// is exhausted). The cursor is the algoId of the last row read: every list is read below it, so an order moving
// from pending to history between pages is neither missed nor repeated.
func algoPage(ctx context.Context, s *Server, creds *Credentials, srcs []*idSource, p *exchangev1.HistoryPage) ([]rawAlgo, string, error) {
	limit := int(p.GetLimit())
	if limit <= 0 || limit > algoPageLimit {
		limit = algoPageLimit
	}
	if c := p.GetCursor(); c != "" {
		if !validID(c) {
			return nil, "", sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "cursor", "cursor %q was not made by this plugin", c)
		}
		for _, src := range srcs {
			src.after = c
		}
	}
	var out []rawAlgo
	seen := map[string]bool{}
	last, calls := "", 0
	for {
		for _, src := range srcs {
			if len(src.buf) > 0 || src.done {
				continue
			}
			if calls == algoPageCalls {
				// The call budget ran out: the next page continues below the last row read.
				return out, last, nil
			}
			calls++
			q := url.Values{}
			for k, v := range src.query {
				q[k] = v
			}
			q.Set("limit", strconv.Itoa(algoPageLimit))
			if src.after != "" {
				q.Set("after", src.after)
			}
			rows, err := call[rawAlgo](ctx, s, src.path, q, creds)
			if err != nil {
				return nil, "", err
			}
			for _, r := range rows {
				if !validID(r.AlgoID) || (src.after != "" && cmpID(r.AlgoID, src.after) >= 0) {
					return nil, "", internalf("%s: algoId %q out of order", src.path, r.AlgoID)
				}
				src.after = r.AlgoID
			}
			src.buf, src.done = rows, len(rows) < algoPageLimit
		}
		var top *idSource
		for _, src := range srcs {
			if len(src.buf) > 0 && (top == nil || cmpID(src.buf[0].AlgoID, top.buf[0].AlgoID) > 0) {
				top = src
			}
		}
		if top == nil {
			return out, "", nil // every list is exhausted
		}
		if len(out) == limit {
			return out, last, nil
		}
		r := top.buf[0]
		top.buf = top.buf[1:]
		last = r.AlgoID
		if seen[r.AlgoID] {
			continue // listed by two lists while it moved between them
		}
		seen[r.AlgoID] = true
		ct, err := parseMs("cTime", r.CTime)
		if err != nil {
			return nil, "", internalf("%s: %v", top.path, err)
		}
		switch {
		case p.GetEndTime() > 0 && ct > p.GetEndTime():
			continue // newer than the range
		case ct < p.GetStartTime():
			top.buf, top.done = nil, true // the rest of this list is older still
			continue
		}
		out = append(out, r)
	}
}
