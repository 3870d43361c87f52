package binance

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestEmulatorHistoryNewestPage: with both start_time and end_time, market history answers the NEWEST `limit` rows
// of the range (Binance itself answers the oldest page from startTime), a full page when the range holds enough.
func TestEmulatorHistoryNewestPage(t *testing.T) {
	s, _ := emu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := s.GetServerTime(ctx, &exchangev1.GetServerTimeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	minute := int64(60_000)
	end := (st.Time/minute - 5) * minute
	start := end - 200*minute
	for _, mt := range []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SPOT, exchangev1.MarketType_MARKET_TYPE_SWAP} {
		cs, err := s.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: "BTCUSDT", Interval: "1m",
			StartTime: start, EndTime: end, Limit: 30})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs.Candles) != 30 || cs.Candles[29].OpenTime != end || cs.Candles[0].OpenTime != end-29*minute {
			t.Fatalf("%v candles in [start, end]: %d, first %d last %d; want 30 ending at %d", mt, len(cs.Candles),
				cs.Candles[0].GetOpenTime(), cs.Candles[len(cs.Candles)-1].GetOpenTime(), end)
		}
		few, err := s.GetCandles(ctx, &exchangev1.GetCandlesRequest{MarketType: mt, Symbol: "BTCUSDT", Interval: "1m",
			StartTime: end - 9*minute, EndTime: end, Limit: 30})
		if err != nil || len(few.Candles) != 10 || few.Candles[0].OpenTime != end-9*minute {
			t.Fatalf("%v candles of a 10-minute range: %v %d", mt, err, len(few.GetCandles()))
		}
	}
	hour := 60 * minute
	oiEnd := (st.Time/hour - 2) * hour
	oi, err := s.GetOpenInterestHistory(ctx, &exchangev1.GetOpenInterestHistoryRequest{Series: &exchangev1.SeriesRequest{
		Symbol: "BTCUSDT", Period: "5m", StartTime: oiEnd - 10*hour, EndTime: oiEnd, Limit: 12}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(oi.Points); n != 12 || oi.Points[n-1].Time > oiEnd || oi.Points[n-1].Time < oiEnd-2*5*minute {
		t.Fatalf("open interest in a 10 h range: %d points, last %d; want 12 ending at %d", n, oi.Points[n-1].GetTime(), oiEnd)
	}
}

// TestEmulatorHistoryCursor reads a whole order and fill history page by page through next_cursor, on spot and
// futures: every row once, newest first, none missing (orders made within one millisecond included).
func TestEmulatorHistoryCursor(t *testing.T) {
	s, v := manualEmu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	for _, c := range []struct {
		mt exchangev1.MarketType
		id string
	}{{exchangev1.MarketType_MARKET_TYPE_SPOT, "BTC/USDT"}, {exchangev1.MarketType_MARKET_TYPE_SWAP, "BTC/USDT:PERP"}} {
		b := buildBook(t, v, c.id)
		if c.mt == exchangev1.MarketType_MARKET_TYPE_SWAP {
			if err := v.SetMarkPrice(c.id, b.ref); err != nil {
				t.Fatal(err)
			}
		}
		placed := map[string]bool{}
		for i := range 8 {
			side := exchangev1.Side_SIDE_BUY
			if i%2 == 1 {
				side = exchangev1.Side_SIDE_SELL
			}
			r, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT", Side: side,
				Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.01"})
			if err != nil {
				t.Fatal(err)
			}
			placed[r.Order.OrderId] = true
			if c.mt == exchangev1.MarketType_MARKET_TYPE_SWAP && (i == 1 || i == 5) {
				// Runs of conditional orders (rows of allOrders, listed by ListAlgoOrders) longer than a page:
				// the order pages around them must still be full.
				for k := range 4 {
					if _, err := s.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT",
						Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, Qty: "0.01",
						TriggerPrice:     b.ref.Mul(decimal.NewFromInt(int64(2 + k))).Round(0).String(),
						TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		limit := int32(3)
		seen := map[string]bool{}
		var cursor string
		var lastTime int64 = 1 << 62
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatalf("%v: order history never ends", c.mt)
			}
			h, err := s.ListOrderHistory(ctx, &exchangev1.ListOrderHistoryRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT",
				Page: &exchangev1.HistoryPage{Limit: limit, Cursor: cursor}})
			if err != nil {
				t.Fatal(err)
			}
			if len(h.Orders) > int(limit) || (h.NextCursor != "" && len(h.Orders) != int(limit)) {
				t.Fatalf("%v: page of %d rows (next cursor %q), limit %d", c.mt, len(h.Orders), h.NextCursor, limit)
			}
			for _, o := range h.Orders {
				if seen[o.OrderId] {
					t.Fatalf("%v: order %s on two pages", c.mt, o.OrderId)
				}
				if o.CreatedTime > lastTime {
					t.Fatalf("%v: order %s is newer than the one before it", c.mt, o.OrderId)
				}
				seen[o.OrderId], lastTime = true, o.CreatedTime
			}
			if h.NextCursor == "" {
				break
			}
			cursor = h.NextCursor
		}
		if len(seen) != len(placed) {
			t.Fatalf("%v: %d orders paged, %d placed", c.mt, len(seen), len(placed))
		}
		for id := range placed {
			if !seen[id] {
				t.Fatalf("%v: order %s missing from the paged history (%d seen)", c.mt, id, len(seen))
			}
		}
		// Fills, the same way.
		all, err := s.ListFills(ctx, &exchangev1.ListFillsRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT"})
		if err != nil || len(all.Fills) < 8 {
			t.Fatalf("%v: fills %v %d", c.mt, err, len(all.GetFills()))
		}
		got := map[string]bool{}
		cursor = ""
		qty := decimal.Zero
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatalf("%v: fill history never ends", c.mt)
			}
			f, err := s.ListFills(ctx, &exchangev1.ListFillsRequest{Account: acct, MarketType: c.mt, Symbol: "BTCUSDT",
				Page: &exchangev1.HistoryPage{Limit: 2, Cursor: cursor}})
			if err != nil {
				t.Fatal(err)
			}
			for _, fl := range f.Fills {
				if got[fl.TradeId] {
					t.Fatalf("%v: fill %s on two pages", c.mt, fl.TradeId)
				}
				got[fl.TradeId] = true
				qty = qty.Add(decimal.RequireFromString(fl.Qty))
			}
			if f.NextCursor == "" {
				break
			}
			cursor = f.NextCursor
		}
		if len(got) != len(all.Fills) {
			t.Fatalf("%v: %d fills paged, %d in one call", c.mt, len(got), len(all.Fills))
		}
	}
}
