package okx

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Settings are what Configure accepts.
type Settings struct {
	RESTURL       string
	WSPublicURL   string
	WSPrivateURL  string
	WSBusinessURL string
	RESTTimeout   time.Duration
	// Simulated sends x-simulated-trading: 1 (OKX demo trading).
	Simulated bool
	// ReconnectMin and ReconnectMax bound the WebSocket reconnect backoff.
	ReconnectMin time.Duration
	ReconnectMax time.Duration
	// PingInterval is how long a WebSocket may be idle before a "ping" is sent (below OKX's 30 s).
	PingInterval time.Duration
}

// DefaultSettings point at OKX's production endpoints.
func DefaultSettings() Settings {
	return Settings{RESTURL: DefaultRESTURL, WSPublicURL: DefaultWSPublicURL, WSPrivateURL: DefaultWSPrivateURL,
		WSBusinessURL: DefaultWSBusinessURL, RESTTimeout: 10 * time.Second, ReconnectMin: 250 * time.Millisecond,
		ReconnectMax: 30 * time.Second, PingInterval: wsIdle}
}

// Options configure a Server.
type Options struct {
	Logger   *slog.Logger
	Settings *Settings
	// FundingWait bounds how long a GetTickers call waits for the funding rates it fetches (0: 2 s); what is late
	// is left for the next call.
	FundingWait time.Duration
}

// Server implements exchangev1.ExchangeServer for OKX spot and USDT swaps.
type Server struct {
	exchangev1.UnimplementedExchangeServer

	log         *slog.Logger
	fundingWait time.Duration

	mu       sync.RWMutex
	settings Settings
	rest     *Client

	insts   *instrumentCache
	funding *fundingCache
	state   *accountState

	// ctx bounds every stream; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
}

// New builds a server with the default settings (or opts.Settings).
func New(opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	st := DefaultSettings()
	if opts.Settings != nil {
		st = *opts.Settings
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{log: log, state: newAccountState(), ctx: ctx, cancel: cancel, fundingWait: opts.FundingWait}
	if s.fundingWait <= 0 {
		s.fundingWait = defaultFundingWait
	}
	s.apply(st)
	return s
}

// Close ends every stream the server runs.
func (s *Server) Close() { s.cancel() }

func (s *Server) apply(st Settings) {
	rest := NewClient(st.RESTURL, st.RESTTimeout, s.log)
	rest.Simulated = st.Simulated
	s.mu.Lock()
	s.settings, s.rest = st, rest
	s.insts = newInstrumentCache()
	s.funding = newFundingCache()
	s.mu.Unlock()
}

func (s *Server) client() *Client {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rest
}

func (s *Server) fundingRates() *fundingCache {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.funding
}

func (s *Server) cfg() Settings {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.settings
}

func (s *Server) cache() *instrumentCache {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.insts
}

// Describe says who the plugin is and what it can do.
func (s *Server) Describe(context.Context, *exchangev1.DescribeRequest) (*exchangev1.DescribeResponse, error) {
	spot, swap := exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP
	return &exchangev1.DescribeResponse{
		Exchange: &exchangev1.ExchangeInfo{Key: Key, Slug: Slug, Name: Name, PluginVersion: PluginVersion,
			Status: exchangev1.ExchangeStatus_EXCHANGE_STATUS_AVAILABLE, LogoSvg: Logo, Website: Website},
		Capabilities: &exchangev1.Capabilities{
			MarketTypes: []exchangev1.MarketType{spot, swap},
			Trading: &exchangev1.TradingCapabilities{
				Enabled: true,
				OrderTypes: []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.OrderType_ORDER_TYPE_MARKET,
					exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET,
					exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT},
				TimeInForce: []exchangev1.TimeInForce{exchangev1.TimeInForce_TIME_IN_FORCE_GTC, exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
					exchangev1.TimeInForce_TIME_IN_FORCE_FOK, exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY},
				TriggerPriceTypes: []exchangev1.TriggerPriceType{exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST,
					exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_INDEX},
				ReduceOnly: true, ClosePosition: true, Tpsl: true, Amend: true, CancelAll: true,
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
			Intervals: intervals,
			Analytics: &exchangev1.AnalyticsCapabilities{OpenInterest: true,
				LongShortRatio: []exchangev1.LongShortRatioKind{exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_ACCOUNTS},
				TakerVolume:    true, FundingRateHistory: true, Periods: []string{"5m", "1h", "1d"}},
			PageLimits: &exchangev1.PageLimits{Candles: candlesPageLimit, Trades: tradesPageLimit, OrderBookDepth: bookDepthLimit,
				OrderHistory: ordersPageLimit, Fills: ordersPageLimit, Analytics: rubikLimit, FundingRateHistory: fundingHistoryLimit},
			Streams: &exchangev1.StreamCapabilities{Book: true, Trades: true, Ticker: true, Candles: true, MarkPrice: true, Account: true},
		},
		Settings:   settingSpecs(),
		SdkVersion: SDKVersion,
	}, nil
}

// marketCapabilities is what each market type takes. Both markets take the same order types, time in force,
// amends, algo orders (conditional stop / take-profit legs) and batches of 20; only swaps have margin and
// position modes and reduce-only. OKX has no good-till-date orders.
func marketCapabilities() []*exchangev1.MarketTradingCapabilities {
	orderTypes := []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.OrderType_ORDER_TYPE_MARKET}
	tifs := []exchangev1.TimeInForce{exchangev1.TimeInForce_TIME_IN_FORCE_GTC, exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
		exchangev1.TimeInForce_TIME_IN_FORCE_FOK, exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY}
	algo := []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET,
		exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT}
	triggers := []exchangev1.TriggerPriceType{exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST,
		exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_INDEX}
	// TP/SL on entry (attachAlgoOrds): on limit and market orders, a take-profit or a stop-loss alone or both, market
	// (-1) or a limit price on trigger; spot triggers on the last price only.
	onEntry := func(triggers []exchangev1.TriggerPriceType) *exchangev1.TpSlOnEntry {
		return &exchangev1.TpSlOnEntry{OrderTypes: orderTypes, TriggerPriceTypes: triggers, LimitPrice: true}
	}
	return []*exchangev1.MarketTradingCapabilities{
		{MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, OrderTypes: orderTypes, TimeInForce: tifs, Amend: true,
			AlgoOrderTypes: algo, TpslKinds: []exchangev1.TpSlKind{exchangev1.TpSlKind_TP_SL_KIND_ON_ORDER, exchangev1.TpSlKind_TP_SL_KIND_CONDITIONAL},
			TriggerPriceTypes: triggers, BatchPlaceMax: batchPlaceLimit, BatchCancelMax: batchCancelLimit, CancelAllAfter: true,
			TpslOnEntry:             onEntry([]exchangev1.TriggerPriceType{exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST}),
			IdempotentClientOrderId: true},
		{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, OrderTypes: orderTypes, TimeInForce: tifs, Amend: true,
			AlgoOrderTypes: algo, TpslKinds: []exchangev1.TpSlKind{exchangev1.TpSlKind_TP_SL_KIND_ON_ORDER, exchangev1.TpSlKind_TP_SL_KIND_CONDITIONAL},
			TriggerPriceTypes: triggers, ReduceOnly: true, BatchPlaceMax: batchPlaceLimit, BatchCancelMax: batchCancelLimit, CancelAllAfter: true,
			TpslOnEntry:             onEntry(triggers),
			MarginModes:             []exchangev1.MarginMode{exchangev1.MarginMode_MARGIN_MODE_CROSS, exchangev1.MarginMode_MARGIN_MODE_ISOLATED},
			PositionModes:           []exchangev1.PositionMode{exchangev1.PositionMode_POSITION_MODE_ONE_WAY, exchangev1.PositionMode_POSITION_MODE_HEDGE},
			IdempotentClientOrderId: true},
	}
}

// Configure applies the host's settings; unknown keys are INVALID_ARGUMENT.
func (s *Server) Configure(_ context.Context, req *exchangev1.ConfigureRequest) (*exchangev1.ConfigureResponse, error) {
	st, err := ParseSettings(req.GetSettings())
	if err != nil {
		return nil, err
	}
	s.apply(st)
	return &exchangev1.ConfigureResponse{}, nil
}

// Health times a call to OKX's public time endpoint.
func (s *Server) Health(ctx context.Context, _ *exchangev1.HealthRequest) (*exchangev1.HealthResponse, error) {
	start := time.Now()
	if _, err := s.serverTime(ctx); err != nil {
		return &exchangev1.HealthResponse{Ok: false, Message: err.Error()}, nil
	}
	return &exchangev1.HealthResponse{Ok: true, Message: "ok", LatencyMs: time.Since(start).Milliseconds()}, nil
}

var _ exchangev1.ExchangeServer = (*Server)(nil)

var errNoAccount = sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "an account with api_key, api_secret and passphrase is required")

func settingSpecs() []*exchangev1.SettingSpec {
	d := DefaultSettings()
	return []*exchangev1.SettingSpec{
		{Key: "rest_url", Description: "REST base URL", DefaultValue: d.RESTURL},
		{Key: "ws_public_url", Description: "public WebSocket URL (books, trades, tickers, mark price)", DefaultValue: d.WSPublicURL},
		{Key: "ws_private_url", Description: "private WebSocket URL (orders, positions, account)", DefaultValue: d.WSPrivateURL},
		{Key: "ws_business_url", Description: "business WebSocket URL (candles)", DefaultValue: d.WSBusinessURL},
		{Key: "rest_timeout", Description: "timeout of one REST call (Go duration)", DefaultValue: d.RESTTimeout.String()},
		{Key: "simulated_trading", Description: "send x-simulated-trading: 1 (OKX demo trading)", DefaultValue: "false"},
		{Key: "ws_ping_interval", Description: "idle time before a WebSocket ping (below 30s)", DefaultValue: d.PingInterval.String()},
		{Key: "reconnect_min", Description: "first WebSocket reconnect delay", DefaultValue: d.ReconnectMin.String()},
		{Key: "reconnect_max", Description: "longest WebSocket reconnect delay", DefaultValue: d.ReconnectMax.String()},
	}
}

func badSetting(key, format string, args ...any) error {
	return sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, key, "setting "+key+": "+format, args...)
}

// ParseSettings validates Configure's map on top of the defaults. Unknown keys are INVALID_ARGUMENT.
func ParseSettings(m map[string]string) (Settings, error) {
	st := DefaultSettings()
	for k, v := range m {
		switch k {
		case "rest_url", "ws_public_url", "ws_private_url", "ws_business_url":
			if err := checkBaseURL(k, v); err != nil {
				return st, err
			}
			switch k {
			case "rest_url":
				st.RESTURL = v
			case "ws_public_url":
				st.WSPublicURL = v
			case "ws_private_url":
				st.WSPrivateURL = v
			default:
				st.WSBusinessURL = v
			}
		case "rest_timeout", "ws_ping_interval", "reconnect_min", "reconnect_max":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > 10*time.Minute {
				return st, badSetting(k, "%q is not a duration between 0 and 10m", v)
			}
			switch k {
			case "rest_timeout":
				st.RESTTimeout = d
			case "ws_ping_interval":
				if d >= 30*time.Second {
					return st, badSetting(k, "%s must be below OKX's 30s idle limit", d)
				}
				st.PingInterval = d
			case "reconnect_min":
				st.ReconnectMin = d
			default:
				st.ReconnectMax = d
			}
		case "simulated_trading":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return st, badSetting(k, "%q is not a boolean", v)
			}
			st.Simulated = b
		default:
			return st, badSetting(k, "unknown setting")
		}
	}
	if st.ReconnectMin > st.ReconnectMax {
		return st, badSetting("reconnect_min", "%s is above reconnect_max %s", st.ReconnectMin, st.ReconnectMax)
	}
	return st, nil
}
