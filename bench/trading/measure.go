package main

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Recorder keeps every latency of a step (exact percentiles), up to a fixed number of samples; beyond it the
// samples are counted as dropped and the figures say so.
type Recorder struct {
	mu      sync.Mutex
	samples []time.Duration
	limit   int
	dropped int64
}

// NewRecorder keeps up to limit samples.
func NewRecorder(limit int) *Recorder {
	return &Recorder{samples: make([]time.Duration, 0, min(limit, 1<<16)), limit: limit}
}

// Add records one latency.
func (r *Recorder) Add(d time.Duration) {
	r.mu.Lock()
	if len(r.samples) < r.limit {
		r.samples = append(r.samples, d)
	} else {
		r.dropped++
	}
	r.mu.Unlock()
}

// Summary is a recorder's figures in milliseconds.
type Summary struct {
	Count   int     `json:"count"`
	Dropped int64   `json:"samplesNotKept,omitempty"`
	P50Ms   float64 `json:"p50Ms"`
	P90Ms   float64 `json:"p90Ms"`
	P99Ms   float64 `json:"p99Ms"`
	MaxMs   float64 `json:"maxMs"`
}

// Summary sorts the samples and reads the percentiles (nearest rank).
func (r *Recorder) Summary() Summary {
	r.mu.Lock()
	all := slices.Clone(r.samples)
	dropped := r.dropped
	r.mu.Unlock()
	s := Summary{Count: len(all), Dropped: dropped}
	if len(all) == 0 {
		return s
	}
	slices.Sort(all)
	s.P50Ms = ms(Percentile(all, 0.50))
	s.P90Ms = ms(Percentile(all, 0.90))
	s.P99Ms = ms(Percentile(all, 0.99))
	s.MaxMs = ms(all[len(all)-1])
	return s
}

// Percentile is the nearest-rank percentile p (0 < p <= 1) of sorted samples: the smallest sample with at least
// p of all samples at or below it.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p + 0.999999999)
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Schedule is an open-loop clock: request i is due at Start + i/rate, whatever happened to earlier requests, so a
// slow answer delays the requests behind it and their latency (measured from when they were due) shows it.
type Schedule struct {
	Start time.Time
	Rate  float64 // requests per second
	N     int     // how many requests in all
}

// Due is the time request i is due.
func (s Schedule) Due(i int) time.Time {
	return s.Start.Add(time.Duration(float64(i) * float64(time.Second) / s.Rate))
}

// Run calls send for each request in order, at its due time (never early), with the due time; it stops at N
// requests or when ctx ends, and returns how many it sent. send may block (a full queue): the later requests then
// go out late, keeping their due times.
func (s Schedule) Run(ctx context.Context, sleep func(context.Context, time.Duration) error, now func() time.Time,
	send func(i int, due time.Time) bool) int {
	for i := range s.N {
		due := s.Due(i)
		if d := due.Sub(now()); d > 0 {
			if sleep(ctx, d) != nil {
				return i
			}
		}
		if ctx.Err() != nil || !send(i, due) {
			return i
		}
	}
	return s.N
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
