// Package pluginhost runs the configured exchange plugins: one supervisor per plugin launches it (sdk.Launch),
// configures it, caches its Describe, checks its health, restarts it with exponential backoff and jitter when it
// crashes, and stops it on shutdown. Durable market streams (MarketStream, which may drop and resync books for a
// slow consumer) and account streams (AccountStream, which never drop an event) survive plugin restarts.
//
// The host never sends a call twice: Call runs fn once, there is no retry loop, and sdk.Launch turns gRPC retries
// off. A non-idempotent call (sdk.IsNonIdempotent: PlaceOrder, PlaceAlgoOrder, BatchPlaceOrders, ClosePosition,
// AmendOrder, Transfer, Withdraw, Convert, SubAccountTransfer, CreateSubAccountApiKey) whose error has an unknown outcome (sdk.IsUnknownOutcome: the plugin said so, or it
// died, hung or was cut off mid-call) is resolved by its client id, never re-sent.
package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// State is a plugin's lifecycle state.
type State string

// Plugin states. Starting: first launch under way. Running: launched, configured and described. Restarting: the
// process ended or stopped answering and a relaunch is under way or waiting for its backoff. Failed: the last launch
// attempt failed; the supervisor keeps retrying with backoff. Stopped: the host shut down.
const (
	StateStarting   State = "starting"
	StateRunning    State = "running"
	StateRestarting State = "restarting"
	StateFailed     State = "failed"
	StateStopped    State = "stopped"
)

// AllStates lists every state (for metrics).
var AllStates = []State{StateStarting, StateRunning, StateRestarting, StateFailed, StateStopped}

// Spec is one plugin to run.
type Spec struct {
	Key  int
	Slug string
	Name string
	// Path of the plugin binary.
	Path string
	// SHA256 of the binary (hex); checked at each launch when set.
	SHA256 string
	// Settings are passed to Configure after every launch.
	Settings map[string]string
	// Env holds explicit "NAME=value" entries for the plugin process. The process never inherits the host's
	// environment: it gets sdk.BaseEnv, the host variables named in EnvAllow, and Env (see sdk.LaunchConfig).
	Env []string
	// EnvAllow names host environment variables passed through to the plugin (e.g. HTTPS_PROXY).
	EnvAllow []string
}

// Observer receives the supervisor's events, e.g. for metrics. Implementations must be fast and safe for
// concurrent use.
type Observer interface {
	PluginState(slug string, s State)
	PluginRestart(slug string)
	PluginCall(slug, method string, d time.Duration, err error)
}

type nopObserver struct{}

func (nopObserver) PluginState(string, State)                       {}
func (nopObserver) PluginRestart(string)                            {}
func (nopObserver) PluginCall(string, string, time.Duration, error) {}

// Options tune every supervisor of a host. Zero values take the defaults noted.
type Options struct {
	// StartTimeout bounds one launch handshake (10 s).
	StartTimeout time.Duration
	// CallTimeout bounds Describe, Configure and Health calls (10 s).
	CallTimeout time.Duration
	// HealthInterval is the period of the Health RPC (5 s).
	HealthInterval time.Duration
	// HealthFailures is how many Health calls in a row may fail before a restart (3).
	HealthFailures int
	// ExitPoll is how often the process is checked for having exited (100 ms).
	ExitPoll time.Duration
	// Backoff between restarts (100 ms doubling to 30 s, with jitter).
	Backoff Backoff
	// StableAfter resets the backoff once a plugin has run this long (60 s).
	StableAfter time.Duration
	// StreamBuffer is the default event buffer of a MarketStream (1024).
	StreamBuffer int
	Logger       *slog.Logger
	Observer     Observer
}

func (o Options) withDefaults() Options {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 10 * time.Second
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = 5 * time.Second
	}
	if o.HealthFailures <= 0 {
		o.HealthFailures = 3
	}
	if o.ExitPoll <= 0 {
		o.ExitPoll = 100 * time.Millisecond
	}
	if o.Backoff.Initial <= 0 {
		o.Backoff.Initial = 100 * time.Millisecond
	}
	if o.Backoff.Max <= 0 {
		o.Backoff.Max = 30 * time.Second
	}
	if o.StableAfter <= 0 {
		o.StableAfter = time.Minute
	}
	if o.StreamBuffer <= 0 {
		o.StreamBuffer = 1024
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Observer == nil {
		o.Observer = nopObserver{}
	}
	return o
}

// Host owns the supervisors of all configured plugins.
type Host struct {
	sups  []*Supervisor
	bySlg map[string]*Supervisor
}

// New prepares a host; nothing starts before Run.
func New(specs []Spec, opts Options) *Host {
	opts = opts.withDefaults()
	h := &Host{bySlg: map[string]*Supervisor{}}
	for _, sp := range specs {
		s := newSupervisor(sp, opts)
		h.sups = append(h.sups, s)
		h.bySlg[sp.Slug] = s
	}
	return h
}

// Run starts every supervisor and blocks until ctx ends and every plugin process has been stopped.
func (h *Host) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range h.sups {
		wg.Add(1)
		go func() { // owned by Run; ends with ctx
			defer wg.Done()
			s.run(ctx)
		}()
	}
	wg.Wait()
}

// Get returns the supervisor of a slug.
func (h *Host) Get(slug string) (*Supervisor, bool) {
	s, ok := h.bySlg[slug]
	return s, ok
}

// Supervisors returns every supervisor in configuration order.
func (h *Host) Supervisors() []*Supervisor { return append([]*Supervisor(nil), h.sups...) }

// Status is a snapshot of one supervised plugin.
type Status struct {
	Key      int
	Slug     string
	State    State
	Pid      int
	Restarts int
	// Since is when the current state began.
	Since time.Time
	// LastError is why the plugin last stopped or failed to start.
	LastError string
	// Healthy and HealthMessage come from the last Health RPC.
	Healthy       bool
	HealthMessage string
	// Describe is the cached Describe of the last successful launch (nil before the first).
	Describe *exchangev1.DescribeResponse
}

// ErrUnavailable is returned for calls while the plugin is not running.
var ErrUnavailable = errors.New("plugin is not running")

// errStopped ends waits once the supervisor has stopped for good.
var errStopped = errors.New("plugin host stopped")

// Supervisor runs one plugin.
type Supervisor struct {
	spec Spec
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	state     State
	since     time.Time
	gen       uint64
	plugin    *sdk.Plugin
	describe  *exchangev1.DescribeResponse
	restarts  int
	lastErr   string
	healthy   bool
	healthMsg string
	// changed is closed and replaced on every state change (a broadcast to waiters).
	changed chan struct{}

	// accounts holds the keys of the open account streams (one per account).
	accounts map[string]bool

	// poke asks the watcher to check the process now (a stream broke). Capacity 1; extra pokes are dropped.
	poke chan struct{}
}

func newSupervisor(sp Spec, opts Options) *Supervisor {
	return &Supervisor{
		spec:    sp,
		opts:    opts,
		log:     opts.Logger.With("plugin", sp.Slug),
		state:   StateStarting,
		since:   time.Now(),
		changed: make(chan struct{}),
		poke:    make(chan struct{}, 1),
	}
}

// Slug is the exchange slug of the plugin.
func (s *Supervisor) Slug() string { return s.spec.Slug }

// Status returns a snapshot.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Key: s.spec.Key, Slug: s.spec.Slug, State: s.state, Restarts: s.restarts, Since: s.since,
		LastError: s.lastErr, Healthy: s.healthy, HealthMessage: s.healthMsg, Describe: s.describe,
	}
	if s.state == StateRunning && s.plugin != nil {
		st.Pid = s.plugin.Pid()
	}
	return st
}

// Describe is the cached Describe response (nil before the first successful launch). It never calls the plugin.
func (s *Supervisor) Describe() *exchangev1.DescribeResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.describe
}

// Client returns the running plugin's client, or ErrUnavailable.
func (s *Supervisor) Client() (exchangev1.ExchangeClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateRunning || s.plugin == nil {
		return nil, fmt.Errorf("%s: %w (%s)", s.spec.Slug, ErrUnavailable, s.state)
	}
	return s.plugin.Exchange, nil
}

// Call runs fn against the running plugin, once, and records its latency under method. An error it returns before
// reaching the plugin wraps ErrUnavailable (sdk.OutcomeOf: failed); errors from the plugin are classified by
// sdk.OutcomeOf.
func (s *Supervisor) Call(ctx context.Context, method string, fn func(context.Context, exchangev1.ExchangeClient) error) error {
	c, err := s.Client()
	if err != nil {
		return err
	}
	start := time.Now()
	err = fn(ctx, c)
	s.opts.Observer.PluginCall(s.spec.Slug, method, time.Since(start), err)
	return err
}

func (s *Supervisor) setState(st State, mutate func()) {
	s.mu.Lock()
	if mutate != nil {
		mutate()
	}
	changed := s.state != st
	s.state = st
	if changed {
		s.since = time.Now()
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	if changed {
		s.opts.Observer.PluginState(s.spec.Slug, st)
	}
}

// running returns the client when the plugin is running with a generation >= minGen; otherwise a channel that is
// closed at the next state change, and whether the supervisor has stopped for good.
func (s *Supervisor) running(minGen uint64) (exchangev1.ExchangeClient, uint64, <-chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateRunning && s.gen >= minGen && s.plugin != nil {
		return s.plugin.Exchange, s.gen, nil, false
	}
	return nil, 0, s.changed, s.state == StateStopped
}

// WaitRunning blocks until the plugin is running, ctx ends or the host stops.
func (s *Supervisor) WaitRunning(ctx context.Context) error {
	for {
		c, _, ch, stopped := s.running(0)
		if c != nil {
			return nil
		}
		if stopped {
			return errStopped
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// checkNow asks the watcher to look at the process at once.
func (s *Supervisor) checkNow() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

func (s *Supervisor) run(ctx context.Context) {
	attempt := 0
	ran := false
	for {
		if ctx.Err() != nil {
			s.setState(StateStopped, nil)
			return
		}
		if ran {
			s.setState(StateRestarting, nil)
		} else {
			s.setState(StateStarting, nil)
		}
		p, desc, err := s.launch(ctx)
		if err != nil {
			if ctx.Err() != nil {
				s.setState(StateStopped, nil)
				return
			}
			delay := s.opts.Backoff.Delay(attempt)
			s.log.Error("plugin launch failed", "err", err, "attempt", attempt+1, "retry_in", delay.String())
			s.setState(StateFailed, func() { s.lastErr = err.Error() })
			attempt++
			if !sleep(ctx, delay) {
				s.setState(StateStopped, nil)
				return
			}
			continue
		}
		ran = true
		started := time.Now()
		s.setState(StateRunning, func() {
			s.gen++
			s.plugin = p
			s.describe = desc
			s.healthy = true
			s.healthMsg = ""
		})
		s.log.Info("plugin running", "pid", p.Pid(), "protocol", p.Protocol,
			"version", desc.GetExchange().GetPluginVersion())
		reason := s.watch(ctx, p)
		p.Kill()
		if ctx.Err() != nil {
			s.setState(StateStopped, func() { s.plugin = nil })
			s.log.Info("plugin stopped", "pid", p.Pid())
			return
		}
		if time.Since(started) >= s.opts.StableAfter {
			attempt = 0
		}
		delay := s.opts.Backoff.Delay(attempt)
		attempt++
		s.log.Warn("plugin down, restarting", "pid", p.Pid(), "reason", reason, "retry_in", delay.String())
		s.setState(StateRestarting, func() {
			s.plugin = nil
			s.restarts++
			s.lastErr = reason
			s.healthy = false
		})
		s.opts.Observer.PluginRestart(s.spec.Slug)
		if !sleep(ctx, delay) {
			s.setState(StateStopped, nil)
			return
		}
	}
}

func (s *Supervisor) launch(ctx context.Context) (*sdk.Plugin, *exchangev1.DescribeResponse, error) {
	lctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	p, err := sdk.Launch(lctx, sdk.LaunchConfig{
		Path:         s.spec.Path,
		SHA256:       s.spec.SHA256,
		Env:          s.spec.Env,
		EnvAllow:     s.spec.EnvAllow,
		StartTimeout: s.opts.StartTimeout,
		Logger:       s.log,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("launch: %w", err)
	}
	desc, err := s.describeAndConfigure(ctx, p)
	if err != nil {
		p.Kill()
		return nil, nil, err
	}
	return p, desc, nil
}

func (s *Supervisor) describeAndConfigure(ctx context.Context, p *sdk.Plugin) (*exchangev1.DescribeResponse, error) {
	cctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
	defer cancel()
	start := time.Now()
	desc, err := p.Exchange.Describe(cctx, &exchangev1.DescribeRequest{})
	s.opts.Observer.PluginCall(s.spec.Slug, "Describe", time.Since(start), err)
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	if got := desc.GetExchange().GetSlug(); got != s.spec.Slug {
		s.log.Warn("plugin describes a different slug than configured", "describe_slug", got)
	}
	if got := int(desc.GetExchange().GetKey()); got != s.spec.Key && s.spec.Key != 0 {
		s.log.Warn("plugin describes a different key than configured", "describe_key", got, "config_key", s.spec.Key)
	}
	start = time.Now()
	_, err = p.Exchange.Configure(cctx, &exchangev1.ConfigureRequest{Settings: s.spec.Settings})
	s.opts.Observer.PluginCall(s.spec.Slug, "Configure", time.Since(start), err)
	if err != nil {
		return nil, fmt.Errorf("configure: %s: %w", sdk.ReasonName(sdk.DetailOf(err).GetReason()), err)
	}
	return desc, nil
}

// watch returns when the plugin must be restarted (with the reason) or ctx ends.
func (s *Supervisor) watch(ctx context.Context, p *sdk.Plugin) string {
	exitTick := time.NewTicker(s.opts.ExitPoll)
	defer exitTick.Stop()
	healthTick := time.NewTicker(s.opts.HealthInterval)
	defer healthTick.Stop()
	failures := 0
	check := func() string {
		if p.Exited() {
			return "process exited"
		}
		hctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		start := time.Now()
		resp, err := p.Exchange.Health(hctx, &exchangev1.HealthRequest{})
		cancel()
		s.opts.Observer.PluginCall(s.spec.Slug, "Health", time.Since(start), err)
		if ctx.Err() != nil {
			return ""
		}
		if err != nil {
			if p.Exited() {
				return "process exited"
			}
			failures++
			s.log.Warn("plugin health check failed", "err", err, "failures", failures)
			if failures >= s.opts.HealthFailures {
				return fmt.Sprintf("%d health checks failed: %v", failures, err)
			}
			return ""
		}
		failures = 0
		s.mu.Lock()
		s.healthy, s.healthMsg = resp.GetOk(), resp.GetMessage()
		s.mu.Unlock()
		return ""
	}
	for {
		select {
		case <-ctx.Done():
			return "shutdown"
		case <-exitTick.C:
			if p.Exited() {
				return "process exited"
			}
		case <-s.poke:
			if r := check(); r != "" {
				return r
			}
		case <-healthTick.C:
			if r := check(); r != "" {
				return r
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
