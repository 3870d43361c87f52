package trading

import (
	"fmt"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestMarginModeCache(t *testing.T) {
	var c marginModes
	k := marginKey{"okx", "acc", "BTC-USDT-SWAP"}
	t0 := time.Unix(1_800_000_000, 0)
	if _, ok := c.get(k, t0); ok {
		t.Fatal("empty cache answered")
	}
	c.put(k, exchangev1.MarginMode_MARGIN_MODE_ISOLATED, t0)
	if m, ok := c.get(k, t0.Add(marginModeTTL-time.Millisecond)); !ok || m != exchangev1.MarginMode_MARGIN_MODE_ISOLATED {
		t.Fatalf("within the TTL: %v %v", m, ok)
	}
	if _, ok := c.get(k, t0.Add(marginModeTTL)); ok {
		t.Fatal("answered after the TTL")
	}
	if _, ok := c.get(marginKey{"okx", "other", "BTC-USDT-SWAP"}, t0); ok {
		t.Fatal("another account's symbol answered")
	}
	c.forget(k)
	if _, ok := c.get(k, t0); ok {
		t.Fatal("answered after forget")
	}
	c.put(k, exchangev1.MarginMode_MARGIN_MODE_UNSPECIFIED, t0)
	if _, ok := c.get(k, t0); ok {
		t.Fatal("an unspecified mode was kept")
	}
	for i := range maxMarginModes + 1 {
		c.put(marginKey{"okx", fmt.Sprint(i), "X"}, exchangev1.MarginMode_MARGIN_MODE_CROSS, t0)
	}
	if n := len(c.m); n > maxMarginModes {
		t.Fatalf("%d entries kept", n)
	}
}

// TestMarginModeReadOnceAndForgotten: on an OKX perpetual, orders sent without a margin mode take the symbol's mode
// read once (kept for the next orders); setting the leverage with a margin mode through exhub forgets it, and the
// next order reads the symbol's mode again.
func TestMarginModeReadOnceAndForgotten(t *testing.T) {
	e := newVenueEnv(t)
	const slug = "okx"
	m := e.market(t, slug, "SWAP")
	ctx := ctxT(t)
	k := marginKey{slug, "okx-b", m.symbol}
	place := func() store.Order {
		t.Helper()
		p := m.price(0.8)
		o, err := e.svc.Place(ctx, "b", newKey(), m.limit("BUY", p, m.qty(p, 1)))
		if err != nil || StatusOf(o) != StatusOpen {
			t.Fatalf("limit order without a margin mode: %+v %v", o, err)
		}
		if c, _, err := e.svc.Cancel(ctx, "b", o.ID); err != nil || StatusOf(c) != StatusCancelled {
			t.Fatalf("cancel: %+v %v", c, err)
		}
		return o
	}
	cached := func() string {
		mm, ok := e.svc.marginModes.get(k, time.Now())
		if !ok {
			return ""
		}
		return enumName(exchangev1.MarginMode_name, mm, "MARGIN_MODE_")
	}
	first := place()
	if first.MarginMode == "" || cached() != first.MarginMode {
		t.Fatalf("journaled %q, cached %q", first.MarginMode, cached())
	}
	if again := place(); again.MarginMode != first.MarginMode {
		t.Fatalf("second order %q, first %q", again.MarginMode, first.MarginMode)
	}
	other := "ISOLATED"
	if first.MarginMode == "ISOLATED" {
		other = "CROSS"
	}
	if _, err := e.svc.SetLeverage(ctx, "b", Scope{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol}, "5", other, ""); err != nil {
		t.Fatalf("set leverage with margin mode %s: %v", other, err)
	}
	if got := cached(); got != "" {
		t.Fatalf("the margin mode %q is still cached after the member set the leverage", got)
	}
	if after := place(); after.MarginMode == "" || cached() != after.MarginMode {
		t.Fatalf("after setting the leverage the order was sent with %q, cached %q", after.MarginMode, cached())
	}
}
