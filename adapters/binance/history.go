package binance

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// History calls return the NEWEST `limit` rows of [start_time, end_time], newest first, whatever Binance's own
// default is (Binance answers the OLDEST page from startTime). The adapter therefore never sends startTime where
// Binance pages from it: it asks for the rows up to an end time and drops those before start_time. next_cursor
// carries on towards older rows: the oldest time returned becomes the next end time, and the ids already returned at
// exactly that time are skipped, so rows sharing a millisecond are neither lost nor repeated.

// histCursor is the opaque next_cursor: base64 of {"e": end time, "s": ids at e already returned}.
type histCursor struct {
	End  int64    `json:"e"`
	Skip []string `json:"s,omitempty"`
}

func (c histCursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// histWindow is one page request after its cursor is applied.
type histWindow struct {
	start, end int64 // inclusive; end 0: up to now
	limit      int   // rows wanted
	skip       map[string]bool
}

// fetch is how many rows to ask Binance for: the page plus the rows skipped at the end time, within max.
func (w histWindow) fetch(max int) int { return min(w.limit+len(w.skip), max) }

// newWindow reads a HistoryPage (and its cursor) for an endpoint returning at most max rows per call.
func newWindow(p *exchangev1.HistoryPage, max int) (histWindow, error) {
	w := histWindow{start: p.GetStartTime(), end: p.GetEndTime(), limit: int(p.GetLimit())}
	if w.limit <= 0 || w.limit > max {
		w.limit = max
	}
	if p.GetCursor() != "" {
		raw, err := base64.RawURLEncoding.DecodeString(p.GetCursor())
		var c histCursor
		if err == nil {
			err = json.Unmarshal(raw, &c)
		}
		if err != nil || c.End <= 0 {
			return w, invalid("page.cursor", "cursor %q was not made by this plugin", p.GetCursor())
		}
		w.end = c.End
		if len(c.Skip) >= max {
			// More rows share one millisecond than a call returns: move past it.
			w.end, c.Skip = c.End-1, nil
		}
		w.skip = make(map[string]bool, len(c.Skip))
		for _, id := range c.Skip {
			w.skip[id] = true
		}
	}
	return w, nil
}

// endParam is the endTime to send ("" for none).
func (w histWindow) endParam() string {
	if w.end <= 0 {
		return ""
	}
	return strconv.FormatInt(w.end, 10)
}

// newestPage keeps the rows of the window (minus those skipped by the cursor), newest first, cut to the limit,
// and returns the cursor of the next older page ("" when there is none). more says whether Binance may hold older
// rows than those it returned (its answer was a full page).
func newestPage[T any](w histWindow, rows []T, more bool, timeOf func(T) int64, idOf func(T) string) ([]T, string) {
	out := make([]T, 0, len(rows))
	for _, r := range rows {
		t := timeOf(r)
		if t < w.start || (w.end > 0 && t > w.end) || (t == w.end && w.skip[idOf(r)]) {
			continue
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b T) int {
		if c := compareInt64(timeOf(b), timeOf(a)); c != 0 {
			return c
		}
		return compareID(idOf(b), idOf(a))
	})
	if len(out) > w.limit {
		out, more = out[:w.limit], true
	}
	if !more || len(out) == 0 {
		return out, ""
	}
	oldest := timeOf(out[len(out)-1])
	c := histCursor{End: oldest}
	if oldest == w.end {
		for id := range w.skip {
			c.Skip = append(c.Skip, id)
		}
	}
	for _, r := range out {
		if timeOf(r) == oldest {
			c.Skip = append(c.Skip, idOf(r))
		}
	}
	slices.Sort(c.Skip)
	return out, c.encode()
}

// compareID orders ids numerically when both are numbers (Binance's order and trade ids grow), else as strings.
func compareID(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		return compareInt64(x, y)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
