package sdktest

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/exhub/exhub/plugin-sdk/faults"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Identity of the reference exchange.
const (
	Key           = 100
	Slug          = "reference"
	Name          = "Reference Exchange"
	PluginVersion = "1.2.0"
	// SDKVersion is the exchange.v1 minor revision this implementation follows.
	SDKVersion = "1.2"
)

// Logo is the reference exchange's logo, a small SVG document.
const Logo = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">` +
	`<rect width="64" height="64" rx="14" fill="#1f6feb"/>` +
	`<path d="M18 46V18h16a9 9 0 0 1 0 18h-6l12 10" fill="none" stroke="#fff" stroke-width="6" ` +
	`stroke-linecap="round" stroke-linejoin="round"/></svg>`

// Defaults of the settings Configure accepts.
const (
	DefaultSeed         = 1
	DefaultTickInterval = 250 * time.Millisecond
	DefaultHistoryDays  = 14
	// DefaultFundingInterval is the time between SWAP funding settlements (00/08/16 UTC).
	DefaultFundingInterval = 8 * time.Hour
)

// Options configure a Server. The zero value is usable: seed 1, a tick every 250 ms, 14 days of history.
type Options struct {
	// Seed makes the market reproducible: the same seed gives the same history and the same price path.
	Seed int64
	// TickInterval is how often the market moves.
	TickInterval time.Duration
	// Manual turns the ticker goroutine off; the caller moves the market with Tick. For deterministic tests.
	Manual bool
	// HistoryDays is how much one-minute history is generated on start.
	HistoryDays int
	// FundingInterval is the time between SWAP funding settlements, aligned to multiples of it since the Unix
	// epoch (whole seconds; default 8h). Tests and the conformance run shorten it.
	FundingInterval time.Duration
	// Now replaces the clock (tests). Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Context, when set, stops the server's goroutine when it ends (Close does too).
	Context context.Context
}

// Server is the reference exchange. It implements exchangev1.ExchangeServer. One mutex guards all state: the
// exchange is small, and a single lock keeps matching, balances and streams trivially consistent.
type Server struct {
	exchangev1.UnsafeExchangeServer

	opts Options
	log  *slog.Logger

	mu          sync.Mutex
	seed        int64
	historyDays int
	unds        map[string]*underlying
	insts       map[string]*instrument // by instKey
	ordered     []*instrument          // listing order
	accounts    map[string]*account
	subKeys     map[string]string // sub-account API key -> its paper account id
	nextID      int64             // order, fill, algo and record ids
	lastFunding int64             // the last funding settlement time run (Unix ms)
	marketSubs  map[*marketSession]struct{}
	closed      bool

	// faults holds lost answers armed by tests and the conformance kit (see Faults and the fault_listen setting).
	faults faults.Injector
	// faultSrv serves the arming endpoint when fault_listen is set; faultAddr is where.
	faultSrv  *http.Server
	faultAddr string

	tick *time.Ticker
	stop context.CancelFunc
	// life ends when the server closes; streams end with it.
	life context.Context
	wg   sync.WaitGroup
}

var _ exchangev1.ExchangeServer = (*Server)(nil)

// New builds the market (history included) and, unless opts.Manual, starts the ticker goroutine. Call Close.
func New(opts Options) *Server {
	if opts.Seed == 0 {
		opts.Seed = DefaultSeed
	}
	if opts.TickInterval <= 0 {
		opts.TickInterval = DefaultTickInterval
	}
	if opts.HistoryDays <= 0 {
		opts.HistoryDays = DefaultHistoryDays
	}
	if opts.FundingInterval < time.Second {
		opts.FundingInterval = DefaultFundingInterval
	}
	opts.FundingInterval = opts.FundingInterval.Truncate(time.Second)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	parent := opts.Context
	if parent == nil {
		parent = context.Background()
	}
	s := &Server{opts: opts, log: opts.Logger, marketSubs: map[*marketSession]struct{}{}}
	s.reset(opts.Seed, opts.HistoryDays)
	ctx, cancel := context.WithCancel(parent)
	s.stop, s.life = cancel, ctx
	if !opts.Manual {
		s.tick = time.NewTicker(opts.TickInterval)
		s.wg.Add(1)
		go s.run(ctx) // owned by the Server: ends with Close or the context
	}
	return s
}

// reset rebuilds the market and forgets every account. Called by New and by Configure when the seed changes.
func (s *Server) reset(seed int64, historyDays int) {
	s.seed, s.historyDays = seed, historyDays
	now := s.nowMs()
	unds, insts := buildMarket(seed, historyDays, now)
	prev := s.insts
	s.unds = unds
	s.ordered = insts
	s.insts = map[string]*instrument{}
	for _, in := range insts {
		s.insts[in.key] = in
		if old, ok := prev[in.key]; ok {
			in.seq = old.seq // book sequences keep growing across rebuilds, so streams never see one go back
		}
		in.refreshSynth()
		in.snapshot(now)
	}
	s.accounts = map[string]*account{}
	s.subKeys = map[string]string{}
	s.nextID = 1_000_000
	s.lastFunding = s.fundingBoundary(now)
}

// Close stops the ticker goroutine and ends open streams. Safe to call twice.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	srv := s.faultSrv
	s.faultSrv = nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	s.stop()
	s.wg.Wait()
	if s.tick != nil {
		s.tick.Stop()
	}
}

func (s *Server) run(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.tick.C:
			s.Tick()
		}
	}
}

// Tick moves the market one step: the underlying prices walk, books are rebuilt, crossed resting orders fill,
// synthetic takers trade, algo orders trigger, positions are marked, and every stream is notified.
func (s *Server) Tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	now := s.nowMs()
	sqrtTicksPerMinute := sqrtRatio(s.opts.TickInterval)
	for _, u := range s.unds {
		move := int64(u.rng.NormFloat64() * u.spec.volBps / 10_000 * sqrtTicksPerMinute * float64(u.price))
		u.price = max(u.price+move+(u.spec.start-u.price)/20_000, u.spec.start/10)
	}
	for _, in := range s.ordered {
		if in.isSwap() {
			in.premiumBps = min(max(in.premiumBps+int64(in.rng.IntN(3))-1, -8), 8)
		}
		in.rollBars(now)
		in.trimBars((s.historyDays + 1) * 1440)
		in.refreshSynth()
		s.fillCrossedResting(in, now)
		for range in.rng.IntN(4) {
			side := exchangev1.Side_SIDE_BUY
			if in.rng.IntN(2) == 0 {
				side = exchangev1.Side_SIDE_SELL
			}
			qty := max(in.spec.levelQty*int64(5+in.rng.IntN(60))/100, 1)
			s.match(in, nil, side, 0, qty, now)
		}
	}
	s.triggerAlgos(now)
	s.expireOrders(now)
	if b := s.fundingBoundary(now); b > s.lastFunding {
		s.lastFunding = b
		s.settleFunding(b)
	}
	s.markPositions(now)
	for _, in := range s.ordered {
		s.publish(in, now, true)
	}
	s.flushAccounts(now)
}

// sqrtRatio scales a per-minute volatility to one tick.
func sqrtRatio(tick time.Duration) float64 {
	return math.Sqrt(float64(tick) / float64(time.Minute))
}

func (s *Server) nowMs() int64 { return s.opts.Now().UnixMilli() }

func (s *Server) newID() string {
	s.nextID++
	return strconv.FormatInt(s.nextID, 10)
}

// instrument finds an instrument or returns INSTRUMENT_NOT_FOUND.
func (s *Server) instrument(t exchangev1.MarketType, symbol string) (*instrument, error) {
	if t == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "market_type",
			"market_type is required")
	}
	if symbol == "" {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "symbol", "symbol is required")
	}
	in, ok := s.insts[instKey(t, symbol)]
	if !ok {
		return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND, "symbol",
			"no %s instrument %q", marketTypeName(t), symbol)
	}
	return in, nil
}

// swapInstrument finds a SWAP instrument (position, leverage and derivatives calls carry only a symbol).
func (s *Server) swapInstrument(symbol string) (*instrument, error) {
	return s.instrument(exchangev1.MarketType_MARKET_TYPE_SWAP, symbol)
}

// ---------------------------------------------------------------------------------------------------------------
// Describe, Configure, Health

// Describe says who the reference exchange is and everything it can do.
func (s *Server) Describe(context.Context, *exchangev1.DescribeRequest) (*exchangev1.DescribeResponse, error) {
	return &exchangev1.DescribeResponse{
		Exchange: &exchangev1.ExchangeInfo{
			Key:           Key,
			Slug:          Slug,
			Name:          Name,
			PluginVersion: PluginVersion,
			Status:        exchangev1.ExchangeStatus_EXCHANGE_STATUS_AVAILABLE,
			LogoSvg:       Logo,
		},
		Capabilities: capabilities(),
		Settings:     settingSpecs(),
		SdkVersion:   SDKVersion,
	}, nil
}

func capabilities() *exchangev1.Capabilities {
	return &exchangev1.Capabilities{
		MarketTypes: []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP},
		Trading: &exchangev1.TradingCapabilities{
			Enabled: true,
			OrderTypes: []exchangev1.OrderType{
				exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.OrderType_ORDER_TYPE_MARKET,
				exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET,
				exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT,
			},
			TimeInForce: []exchangev1.TimeInForce{
				exchangev1.TimeInForce_TIME_IN_FORCE_GTC, exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
				exchangev1.TimeInForce_TIME_IN_FORCE_FOK, exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY,
				exchangev1.TimeInForce_TIME_IN_FORCE_GTD,
			},
			TriggerPriceTypes: []exchangev1.TriggerPriceType{
				exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK,
			},
			ReduceOnly:              true,
			ClosePosition:           true,
			Amend:                   true,
			CancelAll:               true,
			IdempotentClientOrderId: true,
			MarginModes:             []exchangev1.MarginMode{exchangev1.MarginMode_MARGIN_MODE_CROSS, exchangev1.MarginMode_MARGIN_MODE_ISOLATED},
			PositionModes:           []exchangev1.PositionMode{exchangev1.PositionMode_POSITION_MODE_ONE_WAY, exchangev1.PositionMode_POSITION_MODE_HEDGE},
			Markets:                 marketCapabilities(),
			ClientOrderIdFormat:     &exchangev1.ClientIdFormat{MaxLength: clientIDMaxLen, Pattern: clientIDPattern},
			CheckCredentials:        true,
			FundingPayments:         true,
		},
		Wallet:    &exchangev1.WalletCapabilities{Balances: true, Transfer: true, Deposit: true, Withdraw: true, Convert: true},
		Broker:    brokerCapabilities(),
		Intervals: intervalNames(),
		Analytics: &exchangev1.AnalyticsCapabilities{
			OpenInterest: true,
			LongShortRatio: []exchangev1.LongShortRatioKind{
				exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_ACCOUNTS,
				exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_TOP_ACCOUNTS,
				exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_TOP_POSITIONS,
			},
			TakerVolume:        true,
			FundingRateHistory: true,
			Periods:            periodNames(),
		},
		PageLimits: &exchangev1.PageLimits{
			Candles: 1000, Trades: maxTrades, OrderBookDepth: bookLevels, OrderHistory: 500, Fills: 500,
			Analytics: 500, FundingRateHistory: 1000,
		},
		Streams: &exchangev1.StreamCapabilities{Book: true, Trades: true, Ticker: true, Candles: true, MarkPrice: true, Account: true},
	}
}

// settings are the keys Configure accepts. Anything else is INVALID_ARGUMENT.
var settings = map[string]*exchangev1.SettingSpec{
	"seed": {Key: "seed", Description: "Seed of the synthetic market; changing it rebuilds the market and " +
		"forgets paper accounts", DefaultValue: strconv.Itoa(DefaultSeed)},
	"tick_interval": {Key: "tick_interval", Description: "How often the market moves (Go duration, 10ms..1m)",
		DefaultValue: DefaultTickInterval.String()},
	"history_days": {Key: "history_days", Description: "Days of one-minute history generated on (re)build (1..60)",
		DefaultValue: strconv.Itoa(DefaultHistoryDays)},
	"funding_interval": {Key: "funding_interval", Description: "Time between SWAP funding settlements (Go duration, " +
		"whole seconds, 1s..8h; aligned to multiples of it since the Unix epoch)", DefaultValue: DefaultFundingInterval.String()},
	"fault_listen": {Key: "fault_listen", Description: "Loopback address (127.0.0.1:port) on which to serve the " +
		"fault-arming endpoint " + faults.Path + " for tests and the conformance kit; empty: not served"},
}

func settingSpecs() []*exchangev1.SettingSpec {
	out := make([]*exchangev1.SettingSpec, 0, len(settings))
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		out = append(out, settings[k])
	}
	return out
}

// Configure applies host settings. The whole request is validated before anything changes.
func (s *Server) Configure(_ context.Context, req *exchangev1.ConfigureRequest) (*exchangev1.ConfigureResponse, error) {
	seed, days, tick, funding := int64(0), 0, time.Duration(0), time.Duration(0)
	faultListen, setFaultListen := "", false
	for _, k := range slices.Sorted(maps.Keys(req.GetSettings())) {
		v := req.GetSettings()[k]
		bad := func(format string, args ...any) error {
			return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, k, "setting %s: %s", k,
				fmt.Sprintf(format, args...))
		}
		switch k {
		case "seed":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n == 0 {
				return nil, bad("want a non-zero integer, got %q", v)
			}
			seed = n
		case "tick_interval":
			d, err := time.ParseDuration(v)
			if err != nil || d < 10*time.Millisecond || d > time.Minute {
				return nil, bad("want a duration between 10ms and 1m, got %q", v)
			}
			tick = d
		case "funding_interval":
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Second || d > 8*time.Hour || d%time.Second != 0 {
				return nil, bad("want a duration of whole seconds between 1s and 8h, got %q", v)
			}
			funding = d
		case "history_days":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 60 {
				return nil, bad("want an integer from 1 to 60, got %q", v)
			}
			days = n
		case "fault_listen":
			if v != "" {
				if err := checkLoopback(v); err != nil {
					return nil, bad("%v", err)
				}
			}
			faultListen, setFaultListen = v, true
		default:
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, k,
				"unknown setting %q (known: %v)", k, slices.Sorted(maps.Keys(settings)))
		}
	}
	if setFaultListen {
		if err := s.serveFaults(faultListen); err != nil {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, "fault_listen",
				"setting fault_listen: %v", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if (seed != 0 && seed != s.seed) || (days != 0 && days != s.historyDays) {
		if seed == 0 {
			seed = s.seed
		}
		if days == 0 {
			days = s.historyDays
		}
		s.reset(seed, days)
		for sess := range s.marketSubs {
			sess.resync(s)
		}
	}
	if funding != 0 && funding != s.opts.FundingInterval {
		s.opts.FundingInterval = funding
		s.lastFunding = s.fundingBoundary(s.nowMs())
	}
	if tick != 0 {
		s.opts.TickInterval = tick
		if s.tick != nil {
			s.tick.Reset(tick)
		}
	}
	return &exchangev1.ConfigureResponse{}, nil
}

// Health is always fine: the reference exchange has no upstream.
func (s *Server) Health(context.Context, *exchangev1.HealthRequest) (*exchangev1.HealthResponse, error) {
	return &exchangev1.HealthResponse{Ok: true, Message: "in-memory market running"}, nil
}

// GetServerTime returns the exchange clock.
func (s *Server) GetServerTime(context.Context, *exchangev1.GetServerTimeRequest) (*exchangev1.GetServerTimeResponse, error) {
	return &exchangev1.GetServerTimeResponse{Time: s.nowMs()}, nil
}
