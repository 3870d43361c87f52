package bybit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Settings are what Configure accepts.
type Settings struct {
	RESTURL     string
	WSSpotURL   string
	WSLinearURL string
	RESTTimeout time.Duration
	// PingInterval is how often a WebSocket sends {"op":"ping"} (Bybit asks for one every 20 s).
	PingInterval time.Duration
	// ReconnectMin and ReconnectMax bound the WebSocket reconnect backoff.
	ReconnectMin time.Duration
	ReconnectMax time.Duration
}

// DefaultSettings point at Bybit's production endpoints.
func DefaultSettings() Settings {
	return Settings{RESTURL: DefaultRESTURL, WSSpotURL: DefaultWSSpotURL, WSLinearURL: DefaultWSLinearURL,
		RESTTimeout: defaultRESTTimeout, PingInterval: defaultPingInterval, ReconnectMin: defaultReconnectMin,
		ReconnectMax: defaultReconnectMax}
}

// Options configure a Server.
type Options struct {
	Logger   *slog.Logger
	Settings *Settings
}

// Server implements exchangev1.ExchangeServer for Bybit spot and USDT linear perpetuals: market data and trading
// (the account stream, wallet and broker RPCs answer UNIMPLEMENTED and Describe claims none of them).
type Server struct {
	exchangev1.UnimplementedExchangeServer

	log *slog.Logger

	mu       sync.RWMutex
	settings Settings
	rest     *Client
	insts    *instrumentCache
	// instPage is the page size asked of instruments-info (Bybit's maximum; tests lower it to see the cursor).
	instPage atomic.Int32

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
	s := &Server{log: log, ctx: ctx, cancel: cancel}
	s.instPage.Store(instrumentsPageLimit)
	s.apply(st)
	return s
}

// Close ends every stream the server runs.
func (s *Server) Close() { s.cancel() }

func (s *Server) apply(st Settings) {
	rest := NewClient(st.RESTURL, st.RESTTimeout, s.log)
	s.mu.Lock()
	s.settings, s.rest = st, rest
	s.insts = newInstrumentCache()
	s.mu.Unlock()
}

func (s *Server) client() *Client {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rest
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

// Describe says who the plugin is and what it can do: market data and trading of spot and USDT perpetuals. The
// account stream, the wallet and broker sub-accounts are not claimed yet.
func (s *Server) Describe(context.Context, *exchangev1.DescribeRequest) (*exchangev1.DescribeResponse, error) {
	return &exchangev1.DescribeResponse{
		Exchange: &exchangev1.ExchangeInfo{Key: Key, Slug: Slug, Name: Name, PluginVersion: PluginVersion,
			Status: exchangev1.ExchangeStatus_EXCHANGE_STATUS_AVAILABLE, LogoSvg: Logo, Website: Website},
		Capabilities: &exchangev1.Capabilities{
			MarketTypes: []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP},
			Trading:     tradingCapabilities(),
			Intervals:   append([]string(nil), intervals...),
			Analytics: &exchangev1.AnalyticsCapabilities{OpenInterest: true,
				LongShortRatio:     []exchangev1.LongShortRatioKind{exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_ACCOUNTS},
				TakerVolume:        false, // Bybit v5 publishes no taker buy/sell volume series
				FundingRateHistory: true, Periods: append([]string(nil), periods...)},
			PageLimits: &exchangev1.PageLimits{Candles: candlesPageLimit, Trades: linearTradesPageLimit, OrderBookDepth: bookDepthLimit,
				Analytics: analyticsPageLimit, FundingRateHistory: fundingHistoryLimit},
			Streams: &exchangev1.StreamCapabilities{Book: true, Trades: true, Ticker: true, Candles: true, MarkPrice: true},
		},
		Settings:   settingSpecs(),
		SdkVersion: SDKVersion,
	}, nil
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

// Health times a call to Bybit's public time endpoint.
func (s *Server) Health(ctx context.Context, _ *exchangev1.HealthRequest) (*exchangev1.HealthResponse, error) {
	start := time.Now()
	if _, err := s.serverTime(ctx); err != nil {
		return &exchangev1.HealthResponse{Ok: false, Message: err.Error()}, nil
	}
	return &exchangev1.HealthResponse{Ok: true, Message: "ok", LatencyMs: time.Since(start).Milliseconds()}, nil
}

var _ exchangev1.ExchangeServer = (*Server)(nil)

func settingSpecs() []*exchangev1.SettingSpec {
	d := DefaultSettings()
	return []*exchangev1.SettingSpec{
		{Key: "rest_url", Description: "REST base URL", DefaultValue: d.RESTURL},
		{Key: "ws_spot_url", Description: "public WebSocket URL of the spot category", DefaultValue: d.WSSpotURL},
		{Key: "ws_linear_url", Description: "public WebSocket URL of the linear category (USDT perpetuals)", DefaultValue: d.WSLinearURL},
		{Key: "rest_timeout", Description: "timeout of one REST call (Go duration)", DefaultValue: d.RESTTimeout.String()},
		{Key: "ws_ping_interval", Description: "how often a WebSocket sends a ping (Bybit asks for 20s)", DefaultValue: d.PingInterval.String()},
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
		case "rest_url", "ws_spot_url", "ws_linear_url":
			if err := checkBaseURL(k, v); err != nil {
				return st, err
			}
			switch k {
			case "rest_url":
				st.RESTURL = v
			case "ws_spot_url":
				st.WSSpotURL = v
			default:
				st.WSLinearURL = v
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
				if d > time.Minute {
					return st, badSetting(k, "%s is too long: Bybit drops a connection that stays silent", d)
				}
				st.PingInterval = d
			case "reconnect_min":
				st.ReconnectMin = d
			default:
				st.ReconnectMax = d
			}
		default:
			return st, badSetting(k, "unknown setting")
		}
	}
	if st.ReconnectMin > st.ReconnectMax {
		return st, badSetting("reconnect_min", "%s is above reconnect_max %s", st.ReconnectMin, st.ReconnectMax)
	}
	return st, nil
}

// tradingCapabilities is what PlaceOrder and the other trading RPCs take, per market type.
func tradingCapabilities() *exchangev1.TradingCapabilities {
	limitMarket := []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.OrderType_ORDER_TYPE_MARKET}
	tifs := []exchangev1.TimeInForce{exchangev1.TimeInForce_TIME_IN_FORCE_GTC, exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
		exchangev1.TimeInForce_TIME_IN_FORCE_FOK, exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY}
	margins := []exchangev1.MarginMode{exchangev1.MarginMode_MARGIN_MODE_CROSS, exchangev1.MarginMode_MARGIN_MODE_ISOLATED}
	posModes := []exchangev1.PositionMode{exchangev1.PositionMode_POSITION_MODE_ONE_WAY, exchangev1.PositionMode_POSITION_MODE_HEDGE}
	triggers := []exchangev1.TriggerPriceType{exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST, exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK}
	algos := []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET,
		exchangev1.OrderType_ORDER_TYPE_STOP_LIMIT, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_LIMIT}
	return &exchangev1.TradingCapabilities{
		Enabled: true, OrderTypes: limitMarket, TimeInForce: tifs, ReduceOnly: true, ClosePosition: true, Amend: true,
		CancelAll: true, IdempotentClientOrderId: true, MarginModes: margins, PositionModes: posModes, CheckCredentials: true,
		TriggerPriceTypes:   triggers,
		ClientOrderIdFormat: &exchangev1.ClientIdFormat{MaxLength: clientOrderIDMaxLen, Pattern: clientIDRE2},
		Markets: []*exchangev1.MarketTradingCapabilities{
			{MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, OrderTypes: limitMarket, TimeInForce: tifs, Amend: true,
				IdempotentClientOrderId: true},
			{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, OrderTypes: limitMarket, TimeInForce: tifs, Amend: true,
				ReduceOnly: true, MarginModes: margins, PositionModes: posModes, IdempotentClientOrderId: true,
				AlgoOrderTypes: algos, TriggerPriceTypes: triggers},
		},
	}
}
