package binance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/binance/emulator"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
	"github.com/exhub/exhub/plugin-sdk/sdktest"
)

type accountWatch struct {
	t  *testing.T
	ch chan *exchangev1.AccountEvent
	// errc gets the stream's end.
	errc chan error
}

func watchAccount(t *testing.T, ctx context.Context, c exchangev1.ExchangeClient, acct *exchangev1.AccountRef) *accountWatch {
	t.Helper()
	st, err := c.StreamAccount(ctx, &exchangev1.StreamAccountRequest{Account: acct})
	if err != nil {
		t.Fatal(err)
	}
	w := &accountWatch{t: t, ch: make(chan *exchangev1.AccountEvent, 1024), errc: make(chan error, 1)}
	go func() {
		for {
			ev, err := st.Recv()
			if err != nil {
				w.errc <- err
				close(w.ch)
				return
			}
			w.ch <- ev
		}
	}()
	return w
}

// until returns the first event matching ok (and the events before it). The bound is generous (a failure, not a
// timing budget): the events must arrive, however slowly the machine runs.
func (w *accountWatch) until(what string, ok func(*exchangev1.AccountEvent) bool) []*exchangev1.AccountEvent {
	w.t.Helper()
	var seen []*exchangev1.AccountEvent
	deadline := time.After(50 * time.Second)
	for {
		select {
		case ev, open := <-w.ch:
			if !open {
				w.t.Fatalf("stream ended waiting for %s: %v", what, <-w.errc)
			}
			seen = append(seen, ev)
			if ok(ev) {
				return seen
			}
		case <-deadline:
			w.t.Fatalf("no %s; saw %v", what, seen)
		}
	}
}

// untilAll waits until every predicate has matched some event, in any order (Binance does not order an order's
// report against the account update of the same operation).
func (w *accountWatch) untilAll(what string, oks ...func(*exchangev1.AccountEvent) bool) []*exchangev1.AccountEvent {
	w.t.Helper()
	done := make([]bool, len(oks))
	left := len(oks)
	return w.until(what, func(ev *exchangev1.AccountEvent) bool {
		for i, ok := range oks {
			if !done[i] && ok(ev) {
				done[i] = true
				left--
			}
		}
		return left == 0
	})
}

func resynced(market string) func(*exchangev1.AccountEvent) bool {
	return func(ev *exchangev1.AccountEvent) bool {
		st := ev.GetStatus()
		return st.GetState() == exchangev1.StreamStatus_STATE_RESYNCED && strings.HasPrefix(st.GetMessage(), market+" ")
	}
}

func isStatus(st exchangev1.StreamStatus_State) func(*exchangev1.AccountEvent) bool {
	return func(ev *exchangev1.AccountEvent) bool { return ev.GetStatus().GetState() == st }
}

func TestStreamAccountEmulator(t *testing.T) {
	s, v, e := manualEmuCfg(t, emulator.Config{ListenKeyTTL: 3 * time.Second})
	s.userKeepalive = 100 * time.Millisecond // thirty keepalives per TTL: the keys must survive on keepalives alone
	c, stop, err := sdktest.ServeInProcess(s)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	acct := demoAccount()
	w := watchAccount(t, ctx, c, acct)
	w.until("CONNECTED", isStatus(exchangev1.StreamStatus_STATE_CONNECTED))

	fb := buildBook(t, v, "BTC/USDT:PERP")
	if err := v.SetMarkPrice("BTC/USDT:PERP", fb.ref); err != nil {
		t.Fatal(err)
	}
	sb := buildBook(t, v, "BTC/USDT")

	// A futures market buy: order (filled), fill, position.
	mb, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: "0.01", ClientOrderId: "acct-fut-1"})
	if err != nil {
		t.Fatal(err)
	}
	var fill *exchangev1.Fill
	var filled *exchangev1.Order
	w.untilAll("position, fill and filled order", func(ev *exchangev1.AccountEvent) bool {
		p := ev.GetPosition()
		return p != nil && p.Symbol == "BTCUSDT" && p.Qty == "0.01" && p.PositionSide == exchangev1.PositionSide_POSITION_SIDE_NET && p.EntryPrice != ""
	}, func(ev *exchangev1.AccountEvent) bool {
		if f := ev.GetFill(); f != nil && f.OrderId == mb.Order.OrderId {
			fill = f
		}
		return fill != nil
	}, func(ev *exchangev1.AccountEvent) bool {
		if o := ev.GetOrder(); o != nil && o.OrderId == mb.Order.OrderId && o.Status == exchangev1.OrderStatus_ORDER_STATUS_FILLED {
			filled = o
		}
		return filled != nil
	})
	if fill == nil || fill.MarketType != exchangev1.MarketType_MARKET_TYPE_SWAP || fill.Qty != "0.01" || !decimal.RequireFromString(fill.Price).Equal(fb.ask) ||
		fill.ClientOrderId != "acct-fut-1" || fill.Side != exchangev1.Side_SIDE_BUY || fill.QuoteQty == "" {
		t.Fatalf("fill: %+v", fill)
	}
	if filled == nil || filled.FilledQty != "0.01" || filled.ClientOrderId != "acct-fut-1" {
		t.Fatalf("filled order: %+v", filled)
	}

	// A stop-loss: waiting algo order, then triggered with its order, and the position back to zero.
	al, err := s.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_SELL, Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, ClosePosition: true,
		TriggerPrice: fb.ref.Mul(decimal.RequireFromString("0.98")).Round(0).String(), TriggerPriceType: exchangev1.TriggerPriceType_TRIGGER_PRICE_TYPE_MARK})
	if err != nil {
		t.Fatal(err)
	}
	w.until("waiting algo order", func(ev *exchangev1.AccountEvent) bool {
		a := ev.GetAlgoOrder()
		return a != nil && a.AlgoId == al.AlgoOrder.AlgoId && a.Status == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING && a.ClosePosition
	})
	if err := v.SetMarkPrice("BTC/USDT:PERP", fb.ref.Mul(decimal.RequireFromString("0.97"))); err != nil {
		t.Fatal(err)
	}
	w.untilAll("triggered algo order and closed position", func(ev *exchangev1.AccountEvent) bool {
		a := ev.GetAlgoOrder()
		return a != nil && a.AlgoId == al.AlgoOrder.AlgoId && a.Status == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_TRIGGERED &&
			a.Type == exchangev1.OrderType_ORDER_TYPE_STOP_MARKET
	}, func(ev *exchangev1.AccountEvent) bool {
		p := ev.GetPosition()
		return p != nil && p.Symbol == "BTCUSDT" && decimal.RequireFromString(p.Qty).IsZero()
	})

	// Spot: a resting limit buy locks USDT.
	price := sb.bid.Sub(sb.ref.Mul(decimal.RequireFromString("0.01"))).Round(0)
	lo, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: price.String(), Qty: "0.002", ClientOrderId: "acct-spot-1"})
	if err != nil {
		t.Fatal(err)
	}
	w.untilAll("spot order and USDT balance with a lock", func(ev *exchangev1.AccountEvent) bool {
		o := ev.GetOrder()
		return o != nil && o.OrderId == lo.Order.OrderId && o.Status == exchangev1.OrderStatus_ORDER_STATUS_NEW &&
			o.MarketType == exchangev1.MarketType_MARKET_TYPE_SPOT && o.ClientOrderId == "acct-spot-1" && o.Price == price.String()
	}, func(ev *exchangev1.AccountEvent) bool {
		b := ev.GetBalance()
		return b != nil && b.Asset == "USDT" && b.Wallet == exchangev1.WalletType_WALLET_TYPE_TRADING && decimal.RequireFromString(b.Locked).IsPositive()
	})

	// Keepalives kept both keys alive past several TTLs: a cancel still arrives, with no reconnect in between.
	time.Sleep(4 * time.Second)
	if _, err := s.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT",
		OrderId: lo.Order.OrderId}); err != nil {
		t.Fatal(err)
	}
	seen := w.until("cancelled spot order", func(ev *exchangev1.AccountEvent) bool {
		o := ev.GetOrder()
		return o != nil && o.OrderId == lo.Order.OrderId && o.Status == exchangev1.OrderStatus_ORDER_STATUS_CANCELLED && o.ClientOrderId == "acct-spot-1"
	})
	for _, ev := range seen {
		if ev.GetStatus() != nil {
			t.Fatalf("status %v while keepalives should hold the keys", ev.GetStatus())
		}
	}

	// Expired keys: listenKeyExpired, reconnect with a new key, RESYNCED; events flow again.
	e.ExpireListenKeys()
	w.untilAll("both markets RESYNCED", resynced("spot"), resynced("futures"))
	lo2, err := s.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT",
		Side: exchangev1.Side_SIDE_BUY, Type: exchangev1.OrderType_ORDER_TYPE_LIMIT, Price: price.String(), Qty: "0.002"})
	if err != nil {
		t.Fatal(err)
	}
	w.until("order after the new key", func(ev *exchangev1.AccountEvent) bool {
		return ev.GetOrder().GetOrderId() == lo2.Order.OrderId
	})

	// Dropped sockets: reconnect, RESYNCED, events flow again.
	if n := e.DropConnections(); n < 2 {
		t.Fatalf("dropped %d connections, want both user streams", n)
	}
	w.untilAll("both markets RESYNCED after a drop", resynced("spot"), resynced("futures"))
	if _, err := s.CancelOrder(ctx, &exchangev1.CancelOrderRequest{Account: acct, MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT",
		OrderId: lo2.Order.OrderId}); err != nil {
		t.Fatal(err)
	}
	w.until("cancel after the drop", func(ev *exchangev1.AccountEvent) bool {
		o := ev.GetOrder()
		return o.GetOrderId() == lo2.Order.OrderId && o.GetStatus() == exchangev1.OrderStatus_ORDER_STATUS_CANCELLED
	})

	// The host cancels: the sockets close and the listen keys are deleted.
	cancel()
	for range w.ch {
	}
	rc, _ := s.client()
	deadline := time.Now().Add(30 * time.Second) // a bound for a hung cleanup, not a timing budget
	for {
		_, err := rc.keyed(context.Background(), Futures, "PUT", pathFutListenKey, nil, 1, creds(acct))
		if sdk.DetailOf(err).GetExchangeCode() == "-1125" && e.Connections() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the stream ended: keepalive %v, %d connections", err, e.Connections())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestStreamAccountUnknownKey(t *testing.T) {
	s, _, _ := manualEmuCfg(t, emulator.Config{})
	c, stop, err := sdktest.ServeInProcess(s)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := watchAccount(t, ctx, c, &exchangev1.AccountRef{ApiKey: "nobody", ApiSecret: "nothing"})
	var errs int
	for ev := range w.ch {
		if ev.GetStatus().GetState() == exchangev1.StreamStatus_STATE_ERROR {
			errs++
		}
	}
	err = <-w.errc
	// Binance answers an unknown key with -2015 "Invalid API-key, IP, or permissions for action."
	if sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED || errs != 2 {
		t.Fatalf("unknown key: %d error statuses, end %v", errs, err)
	}
	w2 := watchAccount(t, ctx, c, &exchangev1.AccountRef{})
	for range w2.ch {
	}
	if err := <-w2.errc; sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED {
		t.Fatalf("no credentials: %v", err)
	}
}
