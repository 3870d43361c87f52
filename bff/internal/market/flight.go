package market

import "sync"

// flight collapses concurrent calls for the same key into one: the first caller runs fn, the others wait for its
// result. A cold cache therefore costs the plugin one call per key however many requests arrive at once.
type flight[T any] struct {
	mu    sync.Mutex
	calls map[string]*call[T]
}

type call[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// do runs fn once per key at a time. shared is true for callers that received another caller's result.
func (f *flight[T]) do(key string, fn func() (T, error)) (v T, err error, shared bool) {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]*call[T]{}
	}
	if c, ok := f.calls[key]; ok {
		f.mu.Unlock()
		<-c.done
		return c.val, c.err, true
	}
	c := &call[T]{done: make(chan struct{})}
	f.calls[key] = c
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		close(c.done)
	}()
	c.val, c.err = fn()
	return c.val, c.err, false
}
