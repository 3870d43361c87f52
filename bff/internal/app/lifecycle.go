package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Component is one long-lived part of the BFF. Its life has three steps, each called once, in this order:
//
//   - Open acquires what the component needs and returns when it is usable: a connection opened, migrations run,
//     a port bound. It must not block for the component's lifetime. An error aborts the start: the components
//     opened before it are stopped (in reverse order) and the error is returned.
//   - Run does the component's work until its context ends, then returns nil. It runs on a goroutine the Lifecycle
//     owns. A component with nothing to run returns nil at once. An error before the context ends is a failure that
//     stops the whole BFF.
//   - Close releases what Open acquired, after Run has returned. It is called for every component whose Open
//     succeeded, even when Run was never started.
//
// Components stop in the reverse order of their start: the HTTP server drains first, then the stream gateway
// closes its connections, then analytics flushes, the market service and the plugins stop, and the cache and the
// store close last.
type Component interface {
	Name() string
	Open(ctx context.Context) error
	Run(ctx context.Context) error
	Close() error
}

// Func is a Component made of functions; nil ones do nothing.
type Func struct {
	ID      string
	OpenFn  func(ctx context.Context) error
	RunFn   func(ctx context.Context) error
	CloseFn func() error
}

// Name is ID.
func (f Func) Name() string { return f.ID }

// Open calls OpenFn.
func (f Func) Open(ctx context.Context) error {
	if f.OpenFn == nil {
		return nil
	}
	return f.OpenFn(ctx)
}

// Run calls RunFn.
func (f Func) Run(ctx context.Context) error {
	if f.RunFn == nil {
		return nil
	}
	return f.RunFn(ctx)
}

// Close calls CloseFn.
func (f Func) Close() error {
	if f.CloseFn == nil {
		return nil
	}
	return f.CloseFn()
}

// Lifecycle starts components in order and stops them in reverse order. It owns every goroutine that runs a
// component.
type Lifecycle struct {
	components []Component
	log        *slog.Logger
}

// NewLifecycle runs components in the given order; log may be nil.
func NewLifecycle(log *slog.Logger, components ...Component) *Lifecycle {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Lifecycle{components: components, log: log}
}

type running struct {
	c      Component
	cancel context.CancelFunc
	done   chan struct{}
	err    error // Run's result, read after done is closed
	failed bool  // Run failed before its context ended (reported as the cause)
}

// Run opens every component in order, runs each on its own goroutine and waits until ctx ends or a component's
// Run fails; then it stops the components in reverse order (cancel its context, wait for Run, Close) and returns.
// The error is the first failure (an Open or a Run error) joined with the errors of Close; nil after a clean stop.
//
// Each component's context carries ctx's values but not its cancellation: a component is stopped only when its
// turn in the reverse order comes, so the HTTP server has drained before the services behind it stop.
func (l *Lifecycle) Run(ctx context.Context) error {
	var started []*running
	failed := make(chan *running, len(l.components))
	var cause error
	for _, c := range l.components {
		if err := ctx.Err(); err != nil {
			break // stopped while starting: not a failure
		}
		if err := c.Open(ctx); err != nil {
			if ctx.Err() == nil {
				cause = fmt.Errorf("%s: %w", c.Name(), err)
			}
			break
		}
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		r := &running{c: c, cancel: cancel, done: make(chan struct{})}
		started = append(started, r)
		go func() { // owned by the Lifecycle: ended by r.cancel, waited for in stop
			defer close(r.done)
			r.err = r.c.Run(rctx)
			if r.err != nil && rctx.Err() == nil {
				r.failed = true
				failed <- r
			}
		}()
		l.log.Debug("component started", "component", c.Name())
	}
	if cause == nil && ctx.Err() == nil && len(started) == len(l.components) {
		select {
		case <-ctx.Done():
		case r := <-failed:
			cause = fmt.Errorf("%s: %w", r.c.Name(), r.err)
		}
	}
	if cause != nil {
		l.log.Error("stopping after a failure", "err", cause)
	}
	return errors.Join(cause, l.stop(started))
}

// stop stops started components in reverse order.
func (l *Lifecycle) stop(started []*running) error {
	var errs []error
	for i := len(started) - 1; i >= 0; i-- {
		r := started[i]
		r.cancel()
		<-r.done
		if r.err != nil && !r.failed {
			l.log.Warn("component stopped with an error", "component", r.c.Name(), "err", r.err)
		}
		if err := r.c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: close: %w", r.c.Name(), err))
		}
		l.log.Debug("component stopped", "component", r.c.Name())
	}
	return errors.Join(errs...)
}

// Names lists the components in start order.
func (l *Lifecycle) Names() []string {
	out := make([]string, len(l.components))
	for i, c := range l.components {
		out[i] = c.Name()
	}
	return out
}
