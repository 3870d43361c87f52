// Package cache is the BFF's key/value cache: Valkey (shared by every BFF replica) when the configured address
// answers, otherwise a bounded in-process cache with TTLs. Open says which one it chose in the log.
package cache

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/valkey-io/valkey-go"
)

// Cache stores byte values with a time to live.
type Cache interface {
	// Get returns the value and true, or false when the key is absent or expired.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Set stores the value; ttl must be positive.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Delete(ctx context.Context, key string) error
	// Ping checks the backend.
	Ping(ctx context.Context) error
	// Backend is "valkey" or "memory".
	Backend() string
	Close()
}

// Config says where Valkey is.
type Config struct {
	// Addr of Valkey (host:port); empty uses the in-process cache.
	Addr string
	// Required makes an unreachable Valkey an error instead of a fallback.
	Required    bool
	DialTimeout time.Duration
	// LocalMaxEntries bounds the in-process cache (10000 when 0).
	LocalMaxEntries int
	// ValkeyOption adjusts the client options (tests: miniredis needs DisableCache and AlwaysRESP2).
	ValkeyOption func(*valkey.ClientOption)
}

// Open connects to Valkey or falls back to the in-process cache, logging the choice.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (Cache, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Addr == "" {
		log.Info("cache: in-process (valkey.addr is empty)", "backend", "memory")
		return NewMemory(cfg.LocalMaxEntries), nil
	}
	v, err := OpenValkey(ctx, cfg)
	if err == nil {
		log.Info("cache: valkey", "backend", "valkey", "addr", cfg.Addr)
		return v, nil
	}
	if cfg.Required {
		return nil, fmt.Errorf("cache: valkey at %s (valkey.required is true): %w", cfg.Addr, err)
	}
	log.Warn("cache: valkey unreachable, using the in-process fallback (not shared between replicas)",
		"backend", "memory", "addr", cfg.Addr, "err", err.Error())
	return NewMemory(cfg.LocalMaxEntries), nil
}

// Valkey is the shared cache.
type Valkey struct {
	c valkey.Client
}

// OpenValkey connects and pings.
func OpenValkey(ctx context.Context, cfg Config) (*Valkey, error) {
	timeout := cfg.DialTimeout
	if timeout <= 0 {
		timeout = time.Second
	}
	opt := valkey.ClientOption{
		InitAddress:       []string{cfg.Addr},
		ConnWriteTimeout:  timeout,
		ForceSingleClient: true,
		Dialer:            net.Dialer{Timeout: timeout},
	}
	if cfg.ValkeyOption != nil {
		cfg.ValkeyOption(&opt)
	}
	c, err := valkey.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("valkey %s: %w", cfg.Addr, err)
	}
	v := &Valkey{c: c}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := v.Ping(pctx); err != nil {
		c.Close()
		return nil, err
	}
	return v, nil
}

// Get implements Cache.
func (v *Valkey) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := v.c.Do(ctx, v.c.B().Get().Key(key).Build()).AsBytes()
	if valkey.IsValkeyNil(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("valkey get: %w", err)
	}
	return b, true, nil
}

// Set implements Cache.
func (v *Valkey) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errors.New("cache: ttl must be positive")
	}
	cmd := v.c.B().Set().Key(key).Value(valkey.BinaryString(value)).Px(ttl).Build()
	if err := v.c.Do(ctx, cmd).Error(); err != nil {
		return fmt.Errorf("valkey set: %w", err)
	}
	return nil
}

// Delete implements Cache.
func (v *Valkey) Delete(ctx context.Context, key string) error {
	if err := v.c.Do(ctx, v.c.B().Del().Key(key).Build()).Error(); err != nil {
		return fmt.Errorf("valkey del: %w", err)
	}
	return nil
}

// Ping implements Cache.
func (v *Valkey) Ping(ctx context.Context) error {
	if err := v.c.Do(ctx, v.c.B().Ping().Build()).Error(); err != nil {
		return fmt.Errorf("valkey ping: %w", err)
	}
	return nil
}

// Backend implements Cache.
func (v *Valkey) Backend() string { return "valkey" }

// Close implements Cache.
func (v *Valkey) Close() { v.c.Close() }

// Client exposes the valkey client (pub/sub, locks) for other BFF packages.
func (v *Valkey) Client() valkey.Client { return v.c }

// Memory is a bounded in-process cache: least recently used entries go first when full; expired entries are
// removed when touched or when they reach the back of the list.
type Memory struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
	now   func() time.Time
}

type entry struct {
	key     string
	value   []byte
	expires time.Time
}

// NewMemory returns an in-process cache holding at most max entries (10000 when max <= 0).
func NewMemory(max int) *Memory {
	if max <= 0 {
		max = 10000
	}
	return &Memory{max: max, ll: list.New(), items: map[string]*list.Element{}, now: time.Now}
}

// Get implements Cache.
func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return nil, false, nil
	}
	e := el.Value.(*entry)
	if !m.now().Before(e.expires) {
		m.ll.Remove(el)
		delete(m.items, key)
		return nil, false, nil
	}
	m.ll.MoveToFront(el)
	return append([]byte(nil), e.value...), true, nil
}

// Set implements Cache.
func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errors.New("cache: ttl must be positive")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v := append([]byte(nil), value...)
	exp := m.now().Add(ttl)
	if el, ok := m.items[key]; ok {
		e := el.Value.(*entry)
		e.value, e.expires = v, exp
		m.ll.MoveToFront(el)
		return nil
	}
	m.items[key] = m.ll.PushFront(&entry{key: key, value: v, expires: exp})
	for m.ll.Len() > m.max {
		last := m.ll.Back()
		m.ll.Remove(last)
		delete(m.items, last.Value.(*entry).key)
	}
	return nil
}

// Delete implements Cache.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		m.ll.Remove(el)
		delete(m.items, key)
	}
	return nil
}

// Len is the number of stored entries (expired ones included until touched).
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ll.Len()
}

// Ping implements Cache.
func (m *Memory) Ping(context.Context) error { return nil }

// Backend implements Cache.
func (m *Memory) Backend() string { return "memory" }

// Close implements Cache.
func (m *Memory) Close() {}
