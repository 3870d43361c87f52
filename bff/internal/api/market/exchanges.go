package market

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/trading"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Exchange is one listed exchange.
type Exchange struct {
	Key           int          `json:"key" doc:"Platform key: 1 Binance, 2 OKX, 3 Bybit; integrators use numbers from 100." example:"1"`
	Slug          string       `json:"slug" doc:"URL-safe identifier used in routes." example:"binance"`
	Name          string       `json:"name" example:"Binance"`
	Status        string       `json:"status" enum:"available,coming_soon,maintenance,unavailable" doc:"What the UI shows. The configuration overrides the plugin's own status; unavailable when the plugin is down."`
	PluginState   string       `json:"pluginState" enum:"running,starting,restarting,failed,none" doc:"Lifecycle of the exchange's plugin process; none when no plugin is configured."`
	PluginVersion string       `json:"pluginVersion" doc:"Version the plugin reports; empty before its first start." example:"1.0.0"`
	LogoSvg       string       `json:"logoSvg" doc:"Logo as an SVG document; may be empty."`
	Website       string       `json:"website" example:"https://www.binance.com"`
	MarketTypes   []string     `json:"marketTypes" doc:"SPOT and/or SWAP (USDT-margined perpetuals)." example:"[\"SPOT\",\"SWAP\"]"`
	Capabilities  Capabilities `json:"capabilities" doc:"What the plugin can do; all empty before the plugin first described itself (and for an exchange without a plugin)."`
}

// Capabilities mirrors exchange.v1 Capabilities with short enum names.
type Capabilities struct {
	MarketTypes []string              `json:"marketTypes"`
	Trading     TradingCapabilities   `json:"trading"`
	Wallet      WalletCapabilities    `json:"wallet"`
	Intervals   []string              `json:"intervals" doc:"Candle intervals, e.g. 1m 5m 1h 1d."`
	Analytics   AnalyticsCapabilities `json:"analytics"`
	PageLimits  PageLimits            `json:"pageLimits"`
	Streams     StreamCapabilities    `json:"streams"`
}

// TradingCapabilities says which order features exist.
type TradingCapabilities struct {
	Enabled                 bool               `json:"enabled"`
	OrderTypes              []string           `json:"orderTypes" doc:"LIMIT, MARKET, STOP_MARKET, TAKE_PROFIT_MARKET, STOP_LIMIT, TAKE_PROFIT_LIMIT."`
	TimeInForce             []string           `json:"timeInForce" doc:"GTC, IOC, FOK, POST_ONLY."`
	TriggerPriceTypes       []string           `json:"triggerPriceTypes" doc:"LAST, MARK, INDEX."`
	ReduceOnly              bool               `json:"reduceOnly"`
	ClosePosition           bool               `json:"closePosition"`
	TpSl                    bool               `json:"tpsl"`
	Amend                   bool               `json:"amend"`
	CancelAll               bool               `json:"cancelAll"`
	IdempotentClientOrderID bool               `json:"idempotentClientOrderId"`
	MarginModes             []string           `json:"marginModes" doc:"CROSS, ISOLATED."`
	PositionModes           []string           `json:"positionModes" doc:"ONE_WAY, HEDGE."`
	SelfTradePrevention     bool               `json:"selfTradePrevention"`
	PriceMatch              []string           `json:"priceMatch,omitempty" doc:"Market types (SPOT, SWAP) where the exchange prices a limit order from its own book (an order's price_match)."`
	TpSlOnEntry             []string           `json:"tpslOnEntry,omitempty" doc:"Market types (SPOT, SWAP) where a new order takes a take-profit / stop-loss: armed by the exchange, or on SWAP by exhub once the entry fills (reduce-only closing orders)."`
	TpSlOnEntryRules        []TpSlOnEntryRules `json:"tpslOnEntryRules,omitempty" doc:"What a take-profit / stop-loss on a new order takes, per market type listed in tpslOnEntry; an order that breaks it is refused (422 not_supported naming take_profit or stop_loss)."`
}

// TpSlOnEntryRules is what TP/SL on a new order takes on one market type.
type TpSlOnEntryRules struct {
	MarketType        string   `json:"marketType" enum:"SPOT,SWAP"`
	OrderTypes        []string `json:"orderTypes" doc:"The entry order types that take TP/SL (LIMIT, MARKET); empty: every order type of the market."`
	BothLegs          bool     `json:"bothLegs" doc:"A take-profit and a stop-loss only together (e.g. Binance spot's OTOCO order list)."`
	TriggerPriceTypes []string `json:"triggerPriceTypes" doc:"The trigger price types of a leg (LAST, MARK, INDEX); empty: any."`
	LimitPrice        bool     `json:"limitPrice" doc:"A leg may carry a limit price; false: market on trigger only."`
	ArmedBy           string   `json:"armedBy" enum:"exchange,exhub" doc:"exchange: sent with the order; exhub: placed by exhub once the entry fills."`
}

// WalletCapabilities says which wallet operations exist.
type WalletCapabilities struct {
	Balances bool `json:"balances"`
	Transfer bool `json:"transfer"`
	Deposit  bool `json:"deposit"`
	Withdraw bool `json:"withdraw"`
	Convert  bool `json:"convert"`
}

// AnalyticsCapabilities says which derivatives analytics exist.
type AnalyticsCapabilities struct {
	OpenInterest       bool     `json:"openInterest"`
	LongShortRatio     []string `json:"longShortRatio" doc:"ACCOUNTS, TOP_ACCOUNTS, TOP_POSITIONS."`
	TakerVolume        bool     `json:"takerVolume"`
	FundingRateHistory bool     `json:"fundingRateHistory"`
	Periods            []string `json:"periods"`
}

// PageLimits are the most items one plugin call returns.
type PageLimits struct {
	Candles            int `json:"candles"`
	Trades             int `json:"trades"`
	OrderBookDepth     int `json:"orderBookDepth"`
	OrderHistory       int `json:"orderHistory"`
	Fills              int `json:"fills"`
	Analytics          int `json:"analytics"`
	FundingRateHistory int `json:"fundingRateHistory"`
}

// StreamCapabilities says which live streams exist.
type StreamCapabilities struct {
	Book      bool `json:"book"`
	Trades    bool `json:"trades"`
	Ticker    bool `json:"ticker"`
	Candles   bool `json:"candles"`
	MarkPrice bool `json:"markPrice"`
	Account   bool `json:"account"`
}

// ExchangesOutput is the body of GET /api/v1/exchanges.
type ExchangesOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         struct {
		Exchanges []Exchange `json:"exchanges"`
	}
}

// ExchangeOutput is the body of GET /api/v1/exchanges/{slug}.
type ExchangeOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         Exchange
}

// registerExchanges adds GET /api/v1/exchanges and GET /api/v1/exchanges/{slug}.
func (s *routes) registerExchanges(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "listExchanges",
		Method:      http.MethodGet,
		Path:        "/api/v1/exchanges",
		Summary:     "List exchanges",
		Description: "Every configured exchange, sorted by key, including those coming soon and those whose plugin is " +
			"down. Names, logos and capabilities come from each plugin's Describe.",
		Tags: []string{"Market"},
	}, func(ctx context.Context, _ *struct{}) (*ExchangesOutput, error) {
		out := &ExchangesOutput{CacheControl: s.publicCache()}
		out.Body.Exchanges = s.exchanges()
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "getExchange",
		Method:      http.MethodGet,
		Path:        "/api/v1/exchanges/{slug}",
		Summary:     "Get one exchange",
		Tags:        []string{"Market"},
		Errors:      []int{http.StatusNotFound, http.StatusUnprocessableEntity},
	}, func(ctx context.Context, in *struct {
		Slug string `path:"slug" pattern:"^[a-z0-9]+(-[a-z0-9]+)*$" maxLength:"40" doc:"Exchange slug." example:"binance"`
	}) (*ExchangeOutput, error) {
		for _, e := range s.exchanges() {
			if e.Slug == in.Slug {
				return &ExchangeOutput{CacheControl: s.publicCache(), Body: e}, nil
			}
		}
		return nil, huma.Error404NotFound(fmt.Sprintf("no exchange with slug %q", in.Slug))
	})
}

func (s *routes) publicCache() string {
	return fmt.Sprintf("public, max-age=%d", int(s.exchangesMaxAge.Seconds()))
}

// exchanges builds the list from the configuration and the cached Describe of each plugin.
func (s *routes) exchanges() []Exchange {
	out := make([]Exchange, 0, len(s.listed))
	for _, ce := range s.listed {
		e := Exchange{Key: ce.Key, Slug: ce.Slug, Name: ce.Name, Website: ce.Website, PluginState: "none",
			Capabilities: capabilities(nil)}
		e.MarketTypes = e.Capabilities.MarketTypes
		var sup *pluginhost.Supervisor
		if ce.Plugin != "" && s.host != nil {
			sup, _ = s.host.Get(ce.Slug)
		}
		status := market.StatusAvailable
		if sup != nil {
			st := sup.Status()
			e.PluginState = pluginState(st.State)
			if d := st.Describe; d != nil {
				info := d.GetExchange()
				if info.GetName() != "" {
					e.Name = info.GetName()
				}
				if info.GetWebsite() != "" {
					e.Website = info.GetWebsite()
				}
				e.LogoSvg = info.GetLogoSvg()
				e.PluginVersion = info.GetPluginVersion()
				e.Capabilities = capabilities(d.GetCapabilities())
				e.MarketTypes = e.Capabilities.MarketTypes
				status = exchangeStatus(info.GetStatus())
			}
			if st.State != pluginhost.StateRunning {
				status = "unavailable"
			}
		} else if ce.Plugin != "" {
			e.PluginState = "failed"
			status = "unavailable"
		}
		if ce.Status != "" {
			status = ce.Status
		}
		e.Status = status
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func pluginState(s pluginhost.State) string {
	switch s {
	case pluginhost.StateRunning, pluginhost.StateStarting, pluginhost.StateRestarting, pluginhost.StateFailed:
		return string(s)
	default: // stopped: only seen during shutdown
		return string(pluginhost.StateFailed)
	}
}

func exchangeStatus(s exchangev1.ExchangeStatus) string {
	switch s {
	case exchangev1.ExchangeStatus_EXCHANGE_STATUS_COMING_SOON:
		return market.StatusComingSoon
	case exchangev1.ExchangeStatus_EXCHANGE_STATUS_MAINTENANCE:
		return market.StatusMaintenance
	default:
		return market.StatusAvailable
	}
}

// enumNames turns proto enum values into their short names ("MARKET_TYPE_SPOT" -> "SPOT"), skipping UNSPECIFIED.
func enumNames[E interface {
	~int32
	String() string
}](prefix string, vals []E) []string {
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if v == 0 {
			continue
		}
		out = append(out, strings.TrimPrefix(v.String(), prefix))
	}
	return out
}

func capabilities(c *exchangev1.Capabilities) Capabilities {
	t, w, a, p, st := c.GetTrading(), c.GetWallet(), c.GetAnalytics(), c.GetPageLimits(), c.GetStreams()
	intervals := append([]string{}, c.GetIntervals()...)
	periods := append([]string{}, a.GetPeriods()...)
	return Capabilities{
		MarketTypes: enumNames("MARKET_TYPE_", c.GetMarketTypes()),
		Trading: TradingCapabilities{
			Enabled:                 t.GetEnabled(),
			OrderTypes:              enumNames("ORDER_TYPE_", t.GetOrderTypes()),
			TimeInForce:             enumNames("TIME_IN_FORCE_", t.GetTimeInForce()),
			TriggerPriceTypes:       enumNames("TRIGGER_PRICE_TYPE_", t.GetTriggerPriceTypes()),
			ReduceOnly:              t.GetReduceOnly(),
			ClosePosition:           t.GetClosePosition(),
			TpSl:                    t.GetTpsl(),
			Amend:                   t.GetAmend(),
			CancelAll:               t.GetCancelAll(),
			IdempotentClientOrderID: t.GetIdempotentClientOrderId(),
			MarginModes:             enumNames("MARGIN_MODE_", t.GetMarginModes()),
			PositionModes:           enumNames("POSITION_MODE_", t.GetPositionModes()),
			SelfTradePrevention:     t.GetSelfTradePrevention(),
			PriceMatch:              priceMatchMarkets(t),
			TpSlOnEntry:             tpslOnEntryMarkets(t),
			TpSlOnEntryRules:        tpslOnEntryRules(t),
		},
		Wallet: WalletCapabilities{Balances: w.GetBalances(), Transfer: w.GetTransfer(), Deposit: w.GetDeposit(),
			Withdraw: w.GetWithdraw(), Convert: w.GetConvert()},
		Intervals: intervals,
		Analytics: AnalyticsCapabilities{
			OpenInterest:       a.GetOpenInterest(),
			LongShortRatio:     enumNames("LONG_SHORT_RATIO_KIND_", a.GetLongShortRatio()),
			TakerVolume:        a.GetTakerVolume(),
			FundingRateHistory: a.GetFundingRateHistory(),
			Periods:            periods,
		},
		PageLimits: PageLimits{Candles: int(p.GetCandles()), Trades: int(p.GetTrades()), OrderBookDepth: int(p.GetOrderBookDepth()),
			OrderHistory: int(p.GetOrderHistory()), Fills: int(p.GetFills()), Analytics: int(p.GetAnalytics()),
			FundingRateHistory: int(p.GetFundingRateHistory())},
		Streams: StreamCapabilities{Book: st.GetBook(), Trades: st.GetTrades(), Ticker: st.GetTicker(),
			Candles: st.GetCandles(), MarkPrice: st.GetMarkPrice(), Account: st.GetAccount()},
	}
}

// priceMatchMarkets lists the market types whose per-market capabilities say price_match.
func priceMatchMarkets(t *exchangev1.TradingCapabilities) []string {
	out := []string{}
	for _, m := range t.GetMarkets() {
		if m.GetPriceMatch() && m.GetMarketType() != exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
			out = append(out, strings.TrimPrefix(m.GetMarketType().String(), "MARKET_TYPE_"))
		}
	}
	return out
}

// tpslOnEntryMarkets lists the market types where an order takes TP/SL on entry: the market claims
// TP_SL_KIND_ON_ORDER, or it is SWAP with reduce-only STOP_MARKET and TAKE_PROFIT_MARKET algo orders, which the
// trading service places itself once the entry fills (trading.EntryTpSlOf).
func tpslOnEntryMarkets(t *exchangev1.TradingCapabilities) []string {
	out := []string{}
	for _, r := range tpslOnEntryRules(t) {
		out = append(out, r.MarketType)
	}
	return out
}

// tpslOnEntryRules are the per-market rules of TP/SL on entry, as the trading service checks them.
func tpslOnEntryRules(t *exchangev1.TradingCapabilities) []TpSlOnEntryRules {
	out := []TpSlOnEntryRules{}
	for _, m := range t.GetMarkets() {
		r, ok := trading.EntryTpSlOf(m)
		if !ok || m.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED {
			continue
		}
		by := "exchange"
		if r.ArmedByExhub {
			by = "exhub"
		}
		out = append(out, TpSlOnEntryRules{MarketType: strings.TrimPrefix(m.GetMarketType().String(), "MARKET_TYPE_"),
			OrderTypes: enumNames("ORDER_TYPE_", r.OrderTypes), BothLegs: r.BothLegs,
			TriggerPriceTypes: enumNames("TRIGGER_PRICE_TYPE_", r.TriggerTypes), LimitPrice: r.LimitPrice, ArmedBy: by})
	}
	return out
}
