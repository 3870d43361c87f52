package market

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/exhub/exhub/bff/internal/pluginhost"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

type grpcOpt = grpc.CallOption

// fakePlugin is a counting plugin: every RPC is counted, may be slowed down, and may fail.
type fakePlugin struct {
	desc *exchangev1.DescribeResponse
	down atomic.Bool
	c    *fakeClient
}

func (f *fakePlugin) Describe() *exchangev1.DescribeResponse { return f.desc }

func (f *fakePlugin) Call(ctx context.Context, _ string, fn func(context.Context, exchangev1.ExchangeClient) error) error {
	if f.down.Load() {
		return fmt.Errorf("fake: %w (restarting)", pluginhost.ErrUnavailable)
	}
	return fn(ctx, f.c)
}

type fakeClient struct {
	exchangev1.ExchangeClient // nil: any RPC not overridden panics

	mu      sync.Mutex
	calls   map[string]int
	delay   time.Duration
	err     error // returned by every market RPC when set
	insts   []*exchangev1.Instrument
	tickers []*exchangev1.Ticker
	// candles: one per minute, open times candleStart + i*60000, i in [0, candleCount).
	candleStart int64
	candleCount int
	candleReqs  []*exchangev1.GetCandlesRequest
}

func (c *fakeClient) enter(method string) error {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[method]++
	d, err := c.delay, c.err
	c.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
	return err
}

func (c *fakeClient) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[method]
}

func (c *fakeClient) setErr(err error) {
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
}

func (c *fakeClient) setTickers(t []*exchangev1.Ticker) {
	c.mu.Lock()
	c.tickers = t
	c.mu.Unlock()
}

func (c *fakeClient) ListInstruments(_ context.Context, req *exchangev1.ListInstrumentsRequest, _ ...grpcOpt) (*exchangev1.ListInstrumentsResponse, error) {
	if err := c.enter("ListInstruments"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*exchangev1.Instrument
	for _, i := range c.insts {
		if req.GetMarketType() == exchangev1.MarketType_MARKET_TYPE_UNSPECIFIED || i.GetMarketType() == req.GetMarketType() {
			out = append(out, i)
		}
	}
	return &exchangev1.ListInstrumentsResponse{Instruments: out}, nil
}

func (c *fakeClient) GetTickers(_ context.Context, req *exchangev1.GetTickersRequest, _ ...grpcOpt) (*exchangev1.GetTickersResponse, error) {
	if err := c.enter("GetTickers"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*exchangev1.Ticker
	for _, t := range c.tickers {
		if t.GetMarketType() == req.GetMarketType() {
			out = append(out, t)
		}
	}
	return &exchangev1.GetTickersResponse{Tickers: out}, nil
}

func (c *fakeClient) GetCandles(_ context.Context, req *exchangev1.GetCandlesRequest, _ ...grpcOpt) (*exchangev1.GetCandlesResponse, error) {
	if err := c.enter("GetCandles"); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.candleReqs = append(c.candleReqs, req)
	limit := int(req.GetLimit())
	if limit <= 0 || limit > int(c.describeLimit()) {
		return nil, fmt.Errorf("fake: limit %d over the page limit", limit)
	}
	end := req.GetEndTime()
	var all []*exchangev1.Candle
	for i := 0; i < c.candleCount; i++ {
		ot := c.candleStart + int64(i)*60_000
		if end > 0 && ot > end {
			break
		}
		p := strconv.Itoa(100 + i)
		all = append(all, &exchangev1.Candle{OpenTime: ot, Open: p, High: p, Low: p, Close: p, Volume: "1", Closed: true})
	}
	if len(all) > limit {
		all = all[len(all)-limit:]
	}
	return &exchangev1.GetCandlesResponse{Candles: all}, nil
}

func (c *fakeClient) describeLimit() int32 { return 100 }

func (c *fakeClient) GetOrderBook(_ context.Context, req *exchangev1.GetOrderBookRequest, _ ...grpcOpt) (*exchangev1.GetOrderBookResponse, error) {
	if err := c.enter("GetOrderBook"); err != nil {
		return nil, err
	}
	b := &exchangev1.OrderBook{Symbol: req.GetSymbol(), MarketType: req.GetMarketType(), Sequence: 42, Time: 1000}
	for i := 0; i < int(req.GetDepth())+5; i++ { // more than asked: the service trims
		b.Bids = append(b.Bids, &exchangev1.PriceLevel{Price: strconv.Itoa(99 - i), Qty: "1"})
		b.Asks = append(b.Asks, &exchangev1.PriceLevel{Price: strconv.Itoa(101 + i), Qty: "2"})
	}
	return &exchangev1.GetOrderBookResponse{Book: b}, nil
}

func (c *fakeClient) GetTrades(_ context.Context, req *exchangev1.GetTradesRequest, _ ...grpcOpt) (*exchangev1.GetTradesResponse, error) {
	if err := c.enter("GetTrades"); err != nil {
		return nil, err
	}
	var out []*exchangev1.Trade
	for i := int(req.GetLimit()); i > 0; i-- { // newest first: the service sorts
		side := exchangev1.Side_SIDE_BUY
		if i%2 == 0 {
			side = exchangev1.Side_SIDE_SELL
		}
		out = append(out, &exchangev1.Trade{Id: strconv.Itoa(i), Price: "100", Qty: "0.5", QuoteQty: "50", Side: side,
			Time: int64(1000 + i)})
	}
	return &exchangev1.GetTradesResponse{Trades: out}, nil
}

func inst(symbol string, mt exchangev1.MarketType, base, quote string, st exchangev1.InstrumentStatus, lev string) *exchangev1.Instrument {
	settle := ""
	if mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
		settle = quote
	}
	return &exchangev1.Instrument{Symbol: symbol, MarketType: mt, Base: base, Quote: quote, Settle: settle, Status: st,
		TickSize: "0.1", StepSize: "0.001", MinQty: "0.001", MaxQty: "100", MaxLeverage: lev}
}

func ticker(symbol string, mt exchangev1.MarketType, last, chg, qv string) *exchangev1.Ticker {
	return &exchangev1.Ticker{Symbol: symbol, MarketType: mt, Last: last, ChangePct_24H: chg, QuoteVolume_24H: qv, Time: 1}
}

const (
	spot = exchangev1.MarketType_MARKET_TYPE_SPOT
	swap = exchangev1.MarketType_MARKET_TYPE_SWAP
	trad = exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING
)

// newFake is an exchange with SPOT and SWAP markets, page limits candles 100, trades 200, depth 20.
func newFake(slug string, key int) *fakePlugin {
	c := &fakeClient{
		insts: []*exchangev1.Instrument{
			inst("BTCUSDT", swap, "BTC", "USDT", trad, "125"),
			inst("ETHUSDT", swap, "ETH", "USDT", trad, ""),
			inst("SOLUSDT", swap, "SOL", "USDT", trad, "50"),
			inst("XRPUSDT", swap, "XRP", "USDT", trad, "50"),
			inst("OLDUSDT", swap, "OLD", "USDT", exchangev1.InstrumentStatus_INSTRUMENT_STATUS_DELISTED, "20"),
			inst("BTCUSDC", swap, "BTC", "USDC", trad, "50"),
			inst("BTCUSDT", spot, "BTC", "USDT", trad, ""),
			inst("ETHBTC", spot, "ETH", "BTC", trad, ""),
		},
		tickers: []*exchangev1.Ticker{
			ticker("BTCUSDT", swap, "65000", "1.5", "1000000"),
			ticker("ETHUSDT", swap, "3400", "-4.2", "500000"),
			ticker("SOLUSDT", swap, "150", "9.9", "100000"),
			ticker("XRPUSDT", swap, "0.6", "-0.1", "90000"),
			ticker("OLDUSDT", swap, "1", "50", "10"),    // delisted: not a known instrument
			ticker("BTCUSDC", swap, "65000", "70", "1"), // not USDT
			ticker("BTCUSDT", spot, "65001", "1.4", "2000000"),
		},
		candleStart: 1_700_000_000_000,
		candleCount: 250,
	}
	return &fakePlugin{c: c, desc: &exchangev1.DescribeResponse{
		Exchange: &exchangev1.ExchangeInfo{Key: int32(key), Slug: slug, Name: slug, Status: exchangev1.ExchangeStatus_EXCHANGE_STATUS_AVAILABLE},
		Capabilities: &exchangev1.Capabilities{
			MarketTypes: []exchangev1.MarketType{spot, swap},
			Intervals:   []string{"1m", "5m", "1h", "1d"},
			PageLimits:  &exchangev1.PageLimits{Candles: 100, Trades: 200, OrderBookDepth: 20},
		},
	}}
}
