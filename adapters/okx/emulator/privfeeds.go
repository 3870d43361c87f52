package emulator

import (
	"context"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
)

// instMatch applies the instType/instId/instFamily filters of a private channel argument.
func instMatch(a map[string]string, i *inst) bool {
	t := strings.ToUpper(a["instType"])
	if t != "" && t != "ANY" && t != i.instType() {
		return false
	}
	if id := a["instId"]; id != "" && id != i.id {
		return false
	}
	if f := a["instFamily"]; f != "" && f != i.family() {
		return false
	}
	return true
}

// orderFeed pushes the account's order updates with the latest fill's fields (fillPx, fillSz, tradeId,
// execType, fillFee), as OKX's orders channel does.
func (c *wsConn) orderFeed(a map[string]string, acct string) feed {
	return func(ctx context.Context, ready func()) {
		for ctx.Err() == nil {
			sub := c.s.v.Subscribe(ctx, venue.Filter{Account: acct, Kinds: []venue.EventKind{venue.EvOrder, venue.EvFill}}, 8192)
			ready()
			fills := map[uint64]venue.Fill{}
			fees := map[uint64]decimal.Decimal{}
			for e := range sub.C {
				if e.Fill != nil {
					fills[e.Fill.OrderID] = *e.Fill
					fees[e.Fill.OrderID] = fees[e.Fill.OrderID].Sub(e.Fill.Fee)
					continue
				}
				o := *e.Order
				i := c.s.byVenue[o.Instrument]
				if i == nil || !instMatch(a, i) || o.Status == venue.StatusUntriggered {
					continue
				}
				var last *venue.Fill
				fee := c.s.feeSums(acct)[o.ID]
				f, ok := fills[o.ID]
				if ok {
					last = &f
					delete(fills, o.ID)
				}
				row := c.s.orderObj(o, fee, last)
				row["execType"], row["fillFee"], row["fillFeeCcy"], row["fillNotionalUsd"], row["fillPnl"] = "", "", "", "", ""
				row["code"], row["msg"], row["amendResult"], row["reqId"], row["notionalUsd"] = "0", "", "", "", ""
				if last != nil {
					row["execType"] = map[bool]string{true: "M", false: "T"}[last.Maker]
					row["fillFee"], row["fillFeeCcy"] = dec(last.Fee.Neg()), last.FeeAsset
					row["fillNotionalUsd"] = dec(last.Quote)
					row["fillPnl"] = dec(last.RealizedPnL)
				}
				if o.Status.Final() {
					delete(fees, o.ID)
				}
				if len(fills) > 10_000 {
					clear(fills)
				}
				c.send(push(a, []obj{row}))
			}
		}
	}
}

// positionFeed pushes the current positions on subscribe, then each change (a closed position with pos "0").
func (c *wsConn) positionFeed(a map[string]string, acct string) feed {
	return func(ctx context.Context, ready func()) {
		sub := c.s.v.Subscribe(ctx, venue.Filter{Account: acct, Kinds: []venue.EventKind{venue.EvPosition}}, 8192)
		ready()
		ps, _ := c.s.v.Positions(acct)
		rows := []obj{}
		for _, p := range ps {
			if i := c.s.byVenue[p.Instrument]; i != nil && instMatch(a, i) {
				rows = append(rows, c.s.positionObj(p))
			}
		}
		c.send(push(a, rows))
		for ctx.Err() == nil {
			for e := range sub.C {
				i := c.s.byVenue[e.Position.Instrument]
				if i == nil || !instMatch(a, i) {
					continue
				}
				c.send(push(a, []obj{c.s.positionObj(*e.Position)}))
			}
			sub = c.s.v.Subscribe(ctx, venue.Filter{Account: acct, Kinds: []venue.EventKind{venue.EvPosition}}, 8192)
		}
	}
}

// accountFeed pushes the trading account on subscribe, then the changed currencies on each balance change.
func (c *wsConn) accountFeed(a map[string]string, acct string) feed {
	return func(ctx context.Context, ready func()) {
		only := splitComma(a["ccy"])
		filter := func(ccys []string) func(string) bool {
			return func(x string) bool {
				return (len(only) == 0 || slices.Contains(only, x)) && (ccys == nil || slices.Contains(ccys, x))
			}
		}
		sub := c.s.v.Subscribe(ctx, venue.Filter{Account: acct, Kinds: []venue.EventKind{venue.EvBalance}}, 8192)
		ready()
		if o, err := c.s.accountObj(acct, filter(nil)); err == nil {
			c.send(push(a, []obj{o}))
		}
		for ctx.Err() == nil {
			for e := range sub.C {
				if e.Balance.Wallet != venue.TradingWallet {
					continue
				}
				if o, err := c.s.accountObj(acct, filter([]string{e.Balance.Asset})); err == nil &&
					len(o["details"].([]obj)) > 0 {
					c.send(push(a, []obj{o}))
				}
			}
			sub = c.s.v.Subscribe(ctx, venue.Filter{Account: acct, Kinds: []venue.EventKind{venue.EvBalance}}, 8192)
		}
	}
}

// algoFeed pushes the account's algo orders (conditional and oco) on every change: placed, triggered, cancelled.
// instType may be ANY, SPOT or SWAP, as on OKX.
func (c *wsConn) algoFeed(a map[string]string, acct string) feed {
	return func(ctx context.Context, ready func()) {
		stop := c.s.algos.watch(algoWatcher{account: acct, send: func(g *algo, row obj) {
			if instMatch(a, g.i) {
				c.send(push(a, []obj{row}))
			}
		}})
		defer stop()
		ready()
		<-ctx.Done()
	}
}
