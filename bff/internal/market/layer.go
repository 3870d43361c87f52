package market

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/exhub/exhub/bff/internal/cache"
)

// result is a value with its age and staleness.
type result[T any] struct {
	data   T
	asOf   time.Time
	stale  bool
	reason string
}

func (r result[T]) fresh() Freshness {
	if r.asOf.IsZero() {
		return Freshness{}
	}
	return Freshness{AsOf: r.asOf.UnixMilli(), Stale: r.stale, StaleReason: r.reason}
}

// envelope is the shared cache encoding of a value.
type envelope[T any] struct {
	AsOf int64 `json:"asOf"`
	Data T     `json:"data"`
}

// failure remembers a failed load so the key is not retried before its retry hint.
type failure struct {
	err   error
	until time.Time
}

// layer is a two-level cache (in-process in front of the shared cache) with single flight and stale fallback.
// The in-process map holds one entry per (exchange, market type), so its size is bounded by the configuration.
type layer[T any] struct {
	s        *Service
	kind     string
	fresh    time.Duration
	maxStale time.Duration

	mu     sync.Mutex
	local  map[string]result[T]
	failed map[string]failure
	fl     flight[result[T]]
}

func newLayer[T any](s *Service, kind string, fresh, maxStale time.Duration) *layer[T] {
	return &layer[T]{s: s, kind: kind, fresh: fresh, maxStale: maxStale, local: map[string]result[T]{},
		failed: map[string]failure{}}
}

func (l *layer[T]) sharedKey(key string) string { return l.s.opts.KeyPrefix + l.kind + ":" + key }

func (l *layer[T]) localGet(key string) (result[T], bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.local[key]
	return r, ok
}

// get returns a value younger than the layer's fresh period, loading it when needed.
func (l *layer[T]) get(ctx context.Context, key string, fetch func(context.Context) (T, error)) (result[T], error) {
	if r, ok := l.localGet(key); ok && l.s.now().Sub(r.asOf) < l.fresh {
		return r, nil
	}
	r, err, _ := l.fl.do(key, func() (result[T], error) { return l.load(ctx, key, l.fresh, fetch) })
	return r, err
}

// refresh loads the key unless some value (this replica's or another's) is younger than minAge.
func (l *layer[T]) refresh(ctx context.Context, key string, minAge time.Duration, fetch func(context.Context) (T, error)) (result[T], error) {
	r, err, _ := l.fl.do(key, func() (result[T], error) {
		l.mu.Lock()
		delete(l.failed, key) // the refresher always tries
		l.mu.Unlock()
		return l.load(ctx, key, minAge, fetch)
	})
	return r, err
}

// load runs inside the single flight: the in-process value, then the shared one, then the plugin.
func (l *layer[T]) load(ctx context.Context, key string, freshFor time.Duration, fetch func(context.Context) (T, error)) (result[T], error) {
	now := l.s.now()
	local, haveLocal := l.localGet(key)
	if haveLocal && now.Sub(local.asOf) < freshFor {
		return local, nil // loaded by the flight just before this one
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.s.opts.CallTimeout)
	defer cancel()
	shared, haveShared := l.sharedGet(cctx, key)
	if haveShared && now.Sub(shared.asOf) < freshFor {
		l.put(key, shared)
		return shared, nil
	}
	l.mu.Lock()
	f, failedRecently := l.failed[key]
	l.mu.Unlock()
	var err error
	if failedRecently && now.Before(f.until) {
		err = f.err
	} else {
		var data T
		data, err = fetch(cctx)
		if err == nil {
			r := result[T]{data: data, asOf: l.s.now()}
			l.put(key, r)
			l.sharedPut(cctx, key, r)
			l.mu.Lock()
			delete(l.failed, key)
			l.mu.Unlock()
			return r, nil
		}
		err = classify(err, "", nil)
		var ue *UpstreamError
		if errors.As(err, &ue) {
			l.mu.Lock()
			l.failed[key] = failure{err: err, until: l.s.now().Add(ue.RetryAfter)}
			l.mu.Unlock()
		}
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return result[T]{}, err
	}
	best, ok := local, haveLocal
	if haveShared && (!ok || shared.asOf.After(best.asOf)) {
		best, ok = shared, true
	}
	if ok && now.Sub(best.asOf) < l.maxStale {
		best.stale, best.reason = true, reasonOf(err)
		l.s.log.Warn("serving stale "+l.kind, "key", key, "age", now.Sub(best.asOf).String(), "err", err.Error())
		return best, nil
	}
	return result[T]{}, err
}

func (l *layer[T]) put(key string, r result[T]) {
	r.stale, r.reason = false, ""
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.local[key]; ok && cur.asOf.After(r.asOf) {
		return
	}
	l.local[key] = r
}

func (l *layer[T]) sharedGet(ctx context.Context, key string) (result[T], bool) {
	b, ok, err := l.s.opts.Cache.Get(ctx, l.sharedKey(key))
	if err != nil {
		l.s.log.Warn("shared cache read failed", "key", key, "err", err.Error())
		return result[T]{}, false
	}
	if !ok {
		return result[T]{}, false
	}
	var e envelope[T]
	if err := json.Unmarshal(b, &e); err != nil {
		l.s.log.Warn("shared cache value unreadable", "key", key, "err", err.Error())
		return result[T]{}, false
	}
	return result[T]{data: e.Data, asOf: time.UnixMilli(e.AsOf)}, true
}

func (l *layer[T]) sharedPut(ctx context.Context, key string, r result[T]) {
	b, err := json.Marshal(envelope[T]{AsOf: r.asOf.UnixMilli(), Data: r.data})
	if err == nil {
		err = l.s.opts.Cache.Set(ctx, l.sharedKey(key), b, l.maxStale)
	}
	if err != nil {
		l.s.log.Warn("shared cache write failed", "key", key, "err", err.Error())
	}
}

// live serves data fetched per request (candles, books, trades): single flight per identical request and a last
// good value in process for the stale fallback.
type live[T any] struct {
	s        *Service
	kind     string
	maxStale time.Duration
	last     *cache.Memory
	fl       flight[result[T]]
}

func (l *live[T]) get(ctx context.Context, key string, field string, value any, fetch func(context.Context) (T, error)) (result[T], error) {
	r, err, _ := l.fl.do(key, func() (result[T], error) {
		data, err := fetch(ctx)
		now := l.s.now()
		lk := l.kind + ":" + key
		if err == nil {
			r := result[T]{data: data, asOf: now}
			if b, merr := json.Marshal(envelope[T]{AsOf: now.UnixMilli(), Data: data}); merr == nil {
				_ = l.last.Set(ctx, lk, b, l.maxStale)
			}
			return r, nil
		}
		err = classify(err, field, value)
		var fe *FieldError
		if errors.As(err, &fe) {
			return result[T]{}, err
		}
		if b, ok, _ := l.last.Get(ctx, lk); ok {
			var e envelope[T]
			if json.Unmarshal(b, &e) == nil && now.Sub(time.UnixMilli(e.AsOf)) < l.maxStale {
				l.s.log.Warn("serving stale "+l.kind, "key", key, "err", err.Error())
				return result[T]{data: e.Data, asOf: time.UnixMilli(e.AsOf), stale: true, reason: reasonOf(err)}, nil
			}
		}
		return result[T]{}, err
	})
	return r, err
}
