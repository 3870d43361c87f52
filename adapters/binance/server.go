package binance

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Options tune a Server.
type Options struct {
	Logger *slog.Logger
}

// Server implements exchangev1.ExchangeServer for Binance spot and USDT-M perpetuals.
type Server struct {
	exchangev1.UnimplementedExchangeServer

	log *slog.Logger

	mu          sync.RWMutex
	cfg         config
	rest        *RESTClient
	instruments map[Market]*instrumentCache

	transfers transferIDs

	// userKeepalive is how often StreamAccount renews its listen keys (Binance: every 30 minutes).
	userKeepalive time.Duration
}

type config struct {
	endpoints     Endpoints
	httpTimeout   time.Duration
	recvWindow    time.Duration
	wsMaxLifetime time.Duration
}

type instrumentCache struct {
	at     time.Time
	list   []*exchangev1.Instrument
	bySym  map[string]*exchangev1.Instrument
	loaded bool
}

const instrumentTTL = 5 * time.Minute

// New returns a Server pointing at Binance's production endpoints until Configure says otherwise.
func New(opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log, userKeepalive: listenKeyKeepalive}
	s.apply(config{endpoints: DefaultEndpoints(), httpTimeout: DefaultHTTPTimeout, recvWindow: DefaultRecvWindow,
		wsMaxLifetime: DefaultWSMaxLifetime})
	return s
}

func (s *Server) apply(c config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = c
	s.rest = NewRESTClient(c.endpoints, c.httpTimeout, c.recvWindow, s.log)
	s.instruments = map[Market]*instrumentCache{Spot: {}, Futures: {}}
}

func (s *Server) client() (*RESTClient, config) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rest, s.cfg
}

func settingSpecs() []*exchangev1.SettingSpec {
	return []*exchangev1.SettingSpec{
		{Key: SettingSpotRESTURL, Description: "Spot REST base URL", DefaultValue: DefaultSpotRESTURL},
		{Key: SettingSpotWSURL, Description: "Spot WebSocket base URL (combined streams at /stream)", DefaultValue: DefaultSpotWSURL},
		{Key: SettingFuturesRESTURL, Description: "USDT-M futures REST base URL", DefaultValue: DefaultFuturesRESTURL},
		{Key: SettingFuturesWSURL, Description: "USDT-M futures WebSocket base URL (/public, /market, /private below it)", DefaultValue: DefaultFuturesWSURL},
		{Key: SettingHTTPTimeout, Description: "Timeout of one REST call (Go duration)", DefaultValue: DefaultHTTPTimeout.String()},
		{Key: SettingRecvWindow, Description: "recvWindow of signed calls (Go duration, at most 60s)", DefaultValue: DefaultRecvWindow.String()},
		{Key: SettingWSMaxLifetime, Description: "Reconnect a WebSocket before this age; Binance closes at 24h (Go duration)", DefaultValue: DefaultWSMaxLifetime.String()},
	}
}

// Describe says who the plugin is and what it can do.
func (s *Server) Describe(context.Context, *exchangev1.DescribeRequest) (*exchangev1.DescribeResponse, error) {
	return &exchangev1.DescribeResponse{
		Exchange: &exchangev1.ExchangeInfo{Key: ExchangeKey, Slug: Slug, Name: Name, PluginVersion: PluginVersion,
			Status: exchangev1.ExchangeStatus_EXCHANGE_STATUS_AVAILABLE, LogoSvg: logoSVG, Website: Website},
		Capabilities: &exchangev1.Capabilities{
			MarketTypes: []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP},
			Trading: &exchangev1.TradingCapabilities{
				Enabled: true,
				OrderTypes: []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.OrderType_ORDER_TYPE_MARKET,
					exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET},
				TimeInForce: []exchangev1.TimeInForce{exchangev1.TimeInForce_TIME_IN_FORCE_GTC, exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
					exchangev1.TimeInForce_TIME_IN_FORCE_FOK, exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY},
				TriggerPriceTypes: []exchangev1.TriggerPriceType{exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST,
					exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK},
				// Amend is not claimed: only futures amends an order in place; a spot price change is a
				// cancel-replace with a new order id (AmendOrder still serves both, see its comment).
				ReduceOnly: true, ClosePosition: true, Tpsl: false, Amend: false, CancelAll: true,
				IdempotentClientOrderId: true,
				MarginModes:             []exchangev1.MarginMode{exchangev1.MarginMode_MARGIN_MODE_CROSS, exchangev1.MarginMode_MARGIN_MODE_ISOLATED},
				PositionModes:           []exchangev1.PositionMode{exchangev1.PositionMode_POSITION_MODE_ONE_WAY, exchangev1.PositionMode_POSITION_MODE_HEDGE},
				SelfTradePrevention:     true,
				Markets:                 marketCapabilities(),
				ClientOrderIdFormat:     &exchangev1.ClientIdFormat{MaxLength: ClientIDMaxLen, Pattern: ClientIDPattern},
				CheckCredentials:        true,
				FundingPayments:         true,
			},
			Wallet:    &exchangev1.WalletCapabilities{Balances: true, Transfer: true, Deposit: true, Withdraw: true, Convert: true},
			Broker:    brokerCapabilities(),
			Intervals: slices.Clone(Intervals),
			Analytics: &exchangev1.AnalyticsCapabilities{OpenInterest: true, TakerVolume: true, FundingRateHistory: true,
				LongShortRatio: []exchangev1.LongShortRatioKind{exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_ACCOUNTS,
					exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_TOP_ACCOUNTS, exchangev1.LongShortRatioKind_LONG_SHORT_RATIO_KIND_TOP_POSITIONS},
				Periods: slices.Clone(Periods)},
			PageLimits: &exchangev1.PageLimits{Candles: SpotKlineLimit, Trades: TradesLimit, OrderBookDepth: FuturesDepthLimit,
				OrderHistory: OrderHistoryLimit, Fills: FillsLimit, Analytics: FuturesDataLimit, FundingRateHistory: FundingHistoryLimit},
			Streams: &exchangev1.StreamCapabilities{Book: true, Trades: true, Ticker: true, Candles: true, MarkPrice: true, Account: true},
		},
		Settings:   settingSpecs(),
		SdkVersion: SDKVersion,
	}, nil
}

// marketCapabilities: what each market takes. Spot: no in-place amend, no conditional orders, no batch calls or
// dead man's switch. Futures: amend, STOP_MARKET / TAKE_PROFIT_MARKET on last or mark price (also closing the whole
// position), batches of 5 (place) and 10 (cancel), countdownCancelAll, GTD.
func marketCapabilities() []*exchangev1.MarketTradingCapabilities {
	tifs := []exchangev1.TimeInForce{exchangev1.TimeInForce_TIME_IN_FORCE_GTC, exchangev1.TimeInForce_TIME_IN_FORCE_IOC,
		exchangev1.TimeInForce_TIME_IN_FORCE_FOK, exchangev1.TimeInForce_TIME_IN_FORCE_POST_ONLY}
	basic := []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_LIMIT, exchangev1.OrderType_ORDER_TYPE_MARKET}
	return []*exchangev1.MarketTradingCapabilities{
		// Spot TP/SL on entry: a LIMIT entry with both a take-profit and a stop-loss is an OTOCO order list (orderlist.go).
		// It takes only that: a LIMIT entry, both legs, last price, market on trigger (tpsl_on_entry).
		{MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, OrderTypes: basic, TimeInForce: tifs, IdempotentClientOrderId: true,
			TpslKinds:         []exchangev1.TpSlKind{exchangev1.TpSlKind_TP_SL_KIND_ON_ORDER},
			TriggerPriceTypes: []exchangev1.TriggerPriceType{exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST},
			TpslOnEntry: &exchangev1.TpSlOnEntry{OrderTypes: []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_LIMIT},
				BothLegsRequired:  true,
				TriggerPriceTypes: []exchangev1.TriggerPriceType{exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST}}},
		{MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, OrderTypes: basic,
			TimeInForce: append(slices.Clone(tifs), exchangev1.TimeInForce_TIME_IN_FORCE_GTD), Amend: true,
			AlgoOrderTypes: []exchangev1.OrderType{exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, exchangev1.OrderType_ORDER_TYPE_TAKE_PROFIT_MARKET},
			TpslKinds:      []exchangev1.TpSlKind{exchangev1.TpSlKind_TP_SL_KIND_ON_POSITION, exchangev1.TpSlKind_TP_SL_KIND_CONDITIONAL},
			TriggerPriceTypes: []exchangev1.TriggerPriceType{exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_LAST,
				exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK},
			ReduceOnly: true, BatchPlaceMax: FuturesBatchPlaceMax, BatchCancelMax: FuturesBatchCancelMax, CancelAllAfter: true,
			PriceMatch:              true,
			MarginModes:             []exchangev1.MarginMode{exchangev1.MarginMode_MARGIN_MODE_CROSS, exchangev1.MarginMode_MARGIN_MODE_ISOLATED},
			PositionModes:           []exchangev1.PositionMode{exchangev1.PositionMode_POSITION_MODE_ONE_WAY, exchangev1.PositionMode_POSITION_MODE_HEDGE},
			IdempotentClientOrderId: true},
	}
}

// Configure applies host settings; unknown keys and bad values are INVALID_ARGUMENT.
func (s *Server) Configure(_ context.Context, req *exchangev1.ConfigureRequest) (*exchangev1.ConfigureResponse, error) {
	c := config{endpoints: DefaultEndpoints(), httpTimeout: DefaultHTTPTimeout, recvWindow: DefaultRecvWindow, wsMaxLifetime: DefaultWSMaxLifetime}
	for k, v := range req.GetSettings() {
		var err error
		switch k {
		case SettingSpotRESTURL:
			c.endpoints.SpotREST, err = checkURL(k, v, "http", "https")
		case SettingFuturesRESTURL:
			c.endpoints.FuturesREST, err = checkURL(k, v, "http", "https")
		case SettingSpotWSURL:
			c.endpoints.SpotWS, err = checkURL(k, v, "ws", "wss")
		case SettingFuturesWSURL:
			c.endpoints.FuturesWS, err = checkURL(k, v, "ws", "wss")
		case SettingHTTPTimeout:
			c.httpTimeout, err = positiveDuration(k, v, time.Hour)
		case SettingRecvWindow:
			c.recvWindow, err = positiveDuration(k, v, 60*time.Second)
		case SettingWSMaxLifetime:
			c.wsMaxLifetime, err = positiveDuration(k, v, 24*time.Hour)
		default:
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, k, "unknown setting %q", k)
		}
		if err != nil {
			return nil, sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, k, "%v", err)
		}
	}
	s.apply(c)
	return &exchangev1.ConfigureResponse{}, nil
}

func positiveDuration(key, v string, max time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > max {
		return 0, fmt.Errorf("%s: %q is not a duration in (0, %s]", key, v, max)
	}
	return d, nil
}

// Health pings both REST APIs.
func (s *Server) Health(ctx context.Context, _ *exchangev1.HealthRequest) (*exchangev1.HealthResponse, error) {
	c, _ := s.client()
	t0 := time.Now()
	for _, m := range []struct {
		m    Market
		path string
	}{{Spot, pathSpotTime}, {Futures, pathFutTime}} {
		body, err := c.get(ctx, m.m, m.path, nil, 1)
		if err == nil {
			_, err = ParseServerTime(body)
		}
		if err != nil {
			return &exchangev1.HealthResponse{Ok: false, Message: fmt.Sprintf("%s: %s", m.m, sdk.MessageOf(err))}, nil
		}
	}
	return &exchangev1.HealthResponse{Ok: true, Message: "spot and futures reachable", LatencyMs: time.Since(t0).Milliseconds() / 2}, nil
}

var (
	_ exchangev1.ExchangeServer = (*Server)(nil)
	_                           = decimal.Zero
	_                           = http.MethodGet
)

// Close stops background work (streams are owned by their RPCs; nothing else runs yet).
func (s *Server) Close() {}
