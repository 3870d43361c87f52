// Package ratelimit counts attempts per key with GCRA (the generic cell rate algorithm): a limit of N per window lets
// a burst of N through, then one more every window/N. State is one timestamp per key (the theoretical arrival time),
// kept in Valkey so every BFF replica shares it, or in process (tests, or when Valkey fails).
//
// The clock is the caller's (Config.Now): Valkey stores and compares the times it is given, never its own, so tests
// drive the clock instead of sleeping and replicas agree as long as their clocks do.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/valkey-io/valkey-go"
)

// Limit is N attempts per Per, e.g. 10 per 15 minutes.
type Limit struct {
	N   int           `yaml:"n"`
	Per time.Duration `yaml:"per"`
}

// String is "10/15m0s".
func (l Limit) String() string { return fmt.Sprintf("%d/%s", l.N, l.Per) }

// Validate says why a limit is unusable.
func (l Limit) Validate() error {
	if l.N < 1 {
		return fmt.Errorf("limit %s: n must be at least 1", l)
	}
	if l.Per <= 0 {
		return fmt.Errorf("limit %s: per must be positive", l)
	}
	return nil
}

// interval is the time one attempt occupies.
func (l Limit) interval() time.Duration { return l.Per / time.Duration(l.N) }

// Result is the outcome of one attempt.
type Result struct {
	Allowed bool
	// Remaining is how many more attempts would pass right now.
	Remaining int
	// RetryAfter is how long until the next attempt passes (0 when allowed).
	RetryAfter time.Duration
}

// Limiter counts an attempt for key under limit.
type Limiter interface {
	Allow(ctx context.Context, key string, limit Limit) (Result, error)
}

// Config configures a limiter. It is the ratelimit section of the BFF configuration (bff/exhub.yaml,
// EXHUB_RATELIMIT_*); the limits themselves belong to the services that count (the gate section's).
type Config struct {
	// Prefix starts every Valkey key.
	Prefix string `yaml:"prefix"`
	// MaxLocalKeys bounds the in-process table (oldest-expiring keys are dropped first when full).
	MaxLocalKeys int `yaml:"max_local_keys"`
	// Now is the clock; nil is time.Now.
	Now func() time.Time `yaml:"-"`
}

// Defaults returns the configuration used when nothing is set.
func Defaults() Config {
	return Config{Prefix: "exhub:rl:", MaxLocalKeys: 100_000}
}

// Validate says what is wrong with c, each error naming its key ("prefix: is required").
func (c Config) Validate() error {
	var errs []error
	if c.Prefix == "" {
		errs = append(errs, errors.New("prefix: is required"))
	}
	if c.MaxLocalKeys < 1 {
		errs = append(errs, fmt.Errorf("max_local_keys: must be at least 1, got %d", c.MaxLocalKeys))
	}
	return errors.Join(errs...)
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// HashKey turns parts (a limit name, then an identifier or address) into a key that holds no personal data: the
// name in clear, the rest as a SHA-256.
func HashKey(name string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return name + ":" + hex.EncodeToString(h.Sum(nil)[:16])
}

// gcra computes an attempt at now given the stored theoretical arrival time (zero when none). It returns the
// result and the new arrival time to store (zero when nothing changes).
func gcra(now, tat time.Time, l Limit) (Result, time.Time) {
	t := l.interval()
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(t)
	allowAt := next.Add(-l.Per)
	if now.Before(allowAt) {
		return Result{RetryAfter: allowAt.Sub(now)}, time.Time{}
	}
	return Result{Allowed: true, Remaining: int(now.Sub(allowAt) / t)}, next
}

// Local is an in-process limiter: one replica's view, for tests and as the fallback when Valkey fails.
type Local struct {
	cfg  Config
	mu   sync.Mutex
	tats map[string]time.Time
}

// NewLocal returns an in-process limiter.
func NewLocal(cfg Config) *Local {
	return &Local{cfg: cfg, tats: make(map[string]time.Time)}
}

// Allow counts one attempt.
func (l *Local) Allow(_ context.Context, key string, limit Limit) (Result, error) {
	if err := limit.Validate(); err != nil {
		return Result{}, err
	}
	now := l.cfg.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	res, next := gcra(now, l.tats[key], limit)
	if !next.IsZero() {
		if _, ok := l.tats[key]; !ok && len(l.tats) >= l.cfg.MaxLocalKeys {
			l.evict(now)
		}
		l.tats[key] = next
	}
	return res, nil
}

// evict drops lapsed keys, then, if still full, the key that lapses first.
func (l *Local) evict(now time.Time) {
	var oldest string
	var oldestAt time.Time
	for k, t := range l.tats {
		if !t.After(now) {
			delete(l.tats, k)
			continue
		}
		if oldest == "" || t.Before(oldestAt) {
			oldest, oldestAt = k, t
		}
	}
	if len(l.tats) >= l.cfg.MaxLocalKeys && oldest != "" {
		delete(l.tats, oldest)
	}
}

// Len is how many keys the table holds.
func (l *Local) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tats)
}

// gcraScript is gcra in Lua, atomic in Valkey. KEYS[1]: the key; ARGV: now, interval, per (milliseconds). It returns
// {allowed 0|1, remaining, retry_after_ms}. The key lives until its arrival time lapses.
var gcraScript = valkey.NewLuaScript(`
local now = tonumber(ARGV[1])
local t = tonumber(ARGV[2])
local per = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local nxt = tat + t
local allow_at = nxt - per
if now < allow_at then
  return {0, 0, allow_at - now}
end
redis.call('SET', KEYS[1], nxt, 'PX', math.max(1, nxt - now))
return {1, math.floor((now - allow_at) / t), 0}
`)

// Valkey is a limiter shared by all replicas through Valkey. When Valkey fails it counts in process (logging the
// error), so a Valkey outage weakens the limits to per replica instead of opening or closing every door.
type Valkey struct {
	cfg      Config
	client   valkey.Client
	fallback *Local
	log      *slog.Logger
}

// NewValkey returns a limiter over client.
func NewValkey(cfg Config, client valkey.Client, log *slog.Logger) (*Valkey, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ratelimit: %w", err)
	}
	if client == nil {
		return nil, errors.New("ratelimit: nil valkey client")
	}
	if log == nil {
		log = slog.Default()
	}
	return &Valkey{cfg: cfg, client: client, fallback: NewLocal(cfg), log: log}, nil
}

// Allow counts one attempt.
func (v *Valkey) Allow(ctx context.Context, key string, limit Limit) (Result, error) {
	if err := limit.Validate(); err != nil {
		return Result{}, err
	}
	now := v.cfg.now().UnixMilli()
	vals, err := gcraScript.Exec(ctx, v.client, []string{v.cfg.Prefix + key}, []string{
		fmt.Sprint(now), fmt.Sprint(limit.interval().Milliseconds()), fmt.Sprint(limit.Per.Milliseconds()),
	}).AsIntSlice()
	if err == nil && len(vals) != 3 {
		err = fmt.Errorf("script answered %d values", len(vals))
	}
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("ratelimit %s: %w", strings.SplitN(key, ":", 2)[0], ctx.Err())
		}
		v.log.Warn("rate limit: valkey failed, counting in process", "err", err)
		return v.fallback.Allow(ctx, key, limit)
	}
	return Result{Allowed: vals[0] == 1, Remaining: int(vals[1]), RetryAfter: time.Duration(vals[2]) * time.Millisecond}, nil
}
