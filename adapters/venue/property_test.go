package venue

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// runOps drives a venue with a sequence of operations decoded from data (random bytes or a fuzz input) and checks
// the invariants after every step. Operations that the venue refuses are fine; broken invariants are not.
func runOps(t testing.TB, data []byte) {
	f := newFixture(t)
	accts := []string{"a", "b", "c"}
	for _, a := range accts {
		f.fund(a, "5000", "50")
	}
	insts := []string{spot, perp}
	pos := 0
	next := func() int {
		if pos >= len(data) {
			return 0
		}
		b := data[pos]
		pos++
		return int(b)
	}
	var ids []uint64
	owner := map[uint64]string{}
	for pos < len(data) {
		op := next() % 12
		acct := accts[next()%len(accts)]
		inst := insts[next()%2]
		side := Buy
		if next()%2 == 1 {
			side = Sell
		}
		price := decimal.New(int64(950+next()%100), -1).Mul(decimal.NewFromInt(1)) // 95.0 .. 104.9
		qty := decimal.New(int64(1+next()%300), -2)                                // 0.01 .. 3.00
		ctx := context.Background()
		var o Order
		var err error
		switch op {
		case 0, 1, 2:
			tif := []TimeInForce{GTC, GTC, IOC, FOK, PostOnly}[next()%5]
			o, err = f.v.Place(ctx, OrderRequest{Account: acct, Instrument: inst, Side: side, Type: Limit, TIF: tif,
				Price: price, Qty: qty, STP: STPMode(next() % 4)})
		case 3:
			o, err = f.v.Place(ctx, OrderRequest{Account: acct, Instrument: inst, Side: side, Type: Market, Qty: qty,
				ReduceOnly: inst == perp && next()%3 == 0})
		case 4:
			typ := []OrderType{StopMarket, StopLimit, TakeProfitMarket, TakeProfitLimit}[next()%4]
			r := OrderRequest{Account: acct, Instrument: inst, Side: side, Type: typ, StopPrice: price, Qty: qty}
			if typ.limitAfter() {
				r.Price = price
			}
			if inst == perp && next()%2 == 0 {
				r.TriggerBy = TriggerMark
			}
			o, err = f.v.Place(ctx, r)
		case 5:
			if len(ids) > 0 {
				id := ids[next()%len(ids)]
				_, _ = f.v.Cancel(ctx, owner[id], "", id, "")
			}
		case 6:
			if len(ids) > 0 {
				id := ids[next()%len(ids)]
				newPrice, newQty := price, decimal.Zero
				if next()%2 == 0 {
					newPrice, newQty = decimal.Zero, qty
				}
				_, _ = f.v.Amend(ctx, owner[id], "", id, "", newPrice, newQty, decimal.Zero)
			}
		case 7:
			_ = f.v.SetMarkPrice(perp, price)
		case 8:
			_, _ = f.v.CancelAll(ctx, acct, inst)
		case 9:
			_, _ = f.v.AddLiquidity(inst, side, price, qty)
		case 10:
			f.clock.Advance(time.Duration(next()) * time.Minute * 4)
			f.v.AdvanceTo(f.clock.Now())
		case 11:
			_ = f.v.SetLeverage(acct, perp, 1+next()%50)
		}
		if err == nil && o.ID != 0 {
			ids = append(ids, o.ID)
			owner[o.ID] = acct
		}
		checkVenueInvariants(t, f.v)
	}
	// Fills conserve quantity: every order's filled amount equals the sum of its fills.
	for _, a := range accts {
		fills, _ := f.v.Fills(a, "", 0)
		sum := map[uint64]decimal.Decimal{}
		for _, fl := range fills {
			sum[fl.OrderID] = sum[fl.OrderID].Add(fl.Qty)
		}
		if len(fills) >= 1000 {
			continue // the fill ring dropped old fills
		}
		for id, s := range sum {
			o, err := f.v.GetOrder(a, id, "")
			if err != nil {
				continue // aged out of the closed-order ring
			}
			if !o.Filled.Equal(s) {
				t.Fatalf("order %d filled %s, fills sum %s", id, o.Filled, s)
			}
		}
	}
}

func TestPropertyRandomSequences(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 8
	}
	for seed := range n {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		data := make([]byte, 8*300)
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		runOps(t, data)
	}
}

func FuzzOrderSequences(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 10, 50, 0, 0, 1, 1, 0, 1, 10, 50, 0})
	f.Add([]byte{3, 1, 1, 0, 10, 200, 0, 7, 0, 1, 0, 5, 5, 0, 0, 0})
	f.Add([]byte{4, 2, 1, 1, 40, 20, 1, 9, 0, 1, 1, 40, 100, 7, 0, 1, 0, 30, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4000 {
			data = data[:4000]
		}
		runOps(t, data)
	})
}
