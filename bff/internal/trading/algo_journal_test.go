package trading

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/config/setting"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// streamAccounts gives the account stream manager the test's accounts.
type streamAccounts struct{ f *fakeAccounts }

func (a streamAccounts) Accounts(_ context.Context, member string) ([]accountstream.Account, error) {
	a.f.mu.Lock()
	defer a.f.mu.Unlock()
	var out []accountstream.Account
	for ex, ref := range a.f.refs[member] {
		out = append(out, accountstream.Account{ID: ref.GetAccountId(), Exchange: ex})
	}
	return out, nil
}

func (a streamAccounts) AccountRef(ctx context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	ref, err := a.f.AccountRef(ctx, member, exchange)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", feed.ErrNoAccount, err)
	}
	return ref, nil
}

// watchedFeed is the account stream manager with a record of the snapshots each followed account's sink was given
// (the stream is live for that account from then on).
type watchedFeed struct {
	sub       feed.Subscriber
	mu        sync.Mutex
	snapshots map[string]int // member/exchange -> snapshots offered
}

func (w *watchedFeed) Subscribe(ctx context.Context, member, exchange string, sink feed.Sink) (func(), error) {
	return w.sub.Subscribe(ctx, member, exchange, watchedSink{w: w, k: member + "/" + exchange, sink: sink})
}

func (w *watchedFeed) seen(k string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.snapshots[k]
}

type watchedSink struct {
	w    *watchedFeed
	k    string
	sink feed.Sink
}

func (s watchedSink) note(u feed.Update) {
	if u.Kind == feed.KindSnapshot {
		s.w.mu.Lock()
		s.w.snapshots[s.k]++
		s.w.mu.Unlock()
	}
}

func (s watchedSink) Offer(u feed.Update) bool {
	ok := s.sink.Offer(u)
	if ok {
		s.note(u)
	}
	return ok
}

func (s watchedSink) Reset(us []feed.Update) {
	s.sink.Reset(us)
	for _, u := range us {
		s.note(u)
	}
}

// journalStatus is the API status of a journal entry read through the service as its member.
func journalStatus(t *testing.T, svc *Service, member, id string) string {
	t.Helper()
	o, err := svc.Order(ctxT(t), member, id)
	if err != nil {
		return err.Error()
	}
	return StatusOf(o)
}

// closeAll closes member b's position on a perpetual (without a margin mode: the symbol's current one is used) and
// waits until it is flat.
func closeAll(t *testing.T, e *venueEnv, slug string, m market) {
	t.Helper()
	ctx := ctxT(t)
	c, err := e.svc.ClosePosition(ctx, "b", newKey(), ClosePositionRequest{Exchange: slug, Symbol: m.symbol, PositionSide: "NET"})
	if err != nil {
		t.Fatalf("closing without a margin mode: %v", err)
	}
	if c.MarginMode == "" {
		t.Fatalf("the close was journaled without the symbol's margin mode: %+v", c)
	}
	eventually(t, "the position closed", func() (string, bool) {
		pos, err := e.svc.Positions(ctx, "b", Scope{Exchange: slug, Symbol: m.symbol})
		if err != nil {
			return err.Error(), false
		}
		for _, p := range pos {
			if !dec(p.Qty).IsZero() {
				return fmt.Sprint(pos), false
			}
		}
		return "", true
	})
}

// TestMarginModeOnAlgoAndClose: on an OKX perpetual, which needs a margin mode on every order, a stop order and a
// position close sent without one take the symbol's current mode and are accepted.
func TestMarginModeOnAlgoAndClose(t *testing.T) {
	e := newVenueEnv(t)
	const slug = "okx"
	m := e.market(t, slug, "SWAP")
	ctx := ctxT(t)
	trig := m.price(1.5)
	o, err := e.svc.PlaceAlgo(ctx, "b", newKey(), AlgoRequest{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol,
		Side: "BUY", Type: "STOP_MARKET", TriggerPrice: trig, TriggerPriceType: "MARK", Qty: m.qty(trig, 1)})
	if err != nil || StatusOf(o) != StatusWaiting {
		t.Fatalf("stop order without a margin mode: %+v %v", o, err)
	}
	if o.MarginMode != "CROSS" && o.MarginMode != "ISOLATED" {
		t.Fatalf("journaled margin mode %q", o.MarginMode)
	}
	if c, _, err := e.svc.Cancel(ctx, "b", o.ID); err != nil || StatusOf(c) != StatusCancelled {
		t.Fatalf("cancelling the stop: %+v %v", c, err)
	}
	// A position to close.
	if _, err := e.svc.Place(ctx, "b", newKey(), PlaceRequest{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol,
		Side: "BUY", Type: "MARKET", Qty: m.qty(m.last.String(), 1)}); err != nil {
		t.Fatalf("opening: %v", err)
	}
	eventually(t, "a long position", func() (string, bool) {
		pos, err := e.svc.Positions(ctx, "b", Scope{Exchange: slug, Symbol: m.symbol})
		if err != nil {
			return err.Error(), false
		}
		size := decimal.Zero
		for _, p := range pos {
			size = size.Add(dec(p.Qty).Abs())
		}
		return fmt.Sprint(pos), size.IsPositive()
	})
	closeAll(t, e, slug, m)
}

// TestAlgoJournalReconciled: the journal follows a stop order after its acknowledgement. Without an account stream,
// reconciliation (ListAlgoOrders, then the symbol's algo history) records a stop the venue's mark price triggered
// and one cancelled on the exchange outside exhub; with the account stream manager, the stream's algo order event
// alone records the trigger.
func TestAlgoJournalReconciled(t *testing.T) {
	e := newVenueEnv(t)
	for _, slug := range []string{"binance", "okx"} {
		t.Run(slug, func(t *testing.T) {
			m := e.market(t, slug, "SWAP")
			ctx := ctxT(t)
			v := e.venues[slug]
			if err := v.SetMarkPrice(e.perp[slug], m.last); err != nil {
				t.Fatal(err)
			}
			place := func(frac float64) store.Order {
				t.Helper()
				trig := m.price(frac)
				o, err := e.svc.PlaceAlgo(ctx, "b", newKey(), AlgoRequest{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol,
					Side: "BUY", Type: "STOP_MARKET", TriggerPrice: trig, TriggerPriceType: "MARK", MarginMode: "CROSS",
					Qty: m.qty(trig, 1)})
				if err != nil || StatusOf(o) != StatusWaiting {
					t.Fatalf("stop order: %+v %v", o, err)
				}
				return o
			}

			// Triggered by the mark price, seen by reconciliation.
			o := place(1.2)
			if err := v.SetMarkPrice(e.perp[slug], dec(m.price(1.25))); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the journal shows the stop triggered", func() (string, bool) {
				e.svc.Reconcile(slug)
				s := journalStatus(t, e.svc, "b", o.ID)
				return s, s == StatusTriggered
			})
			_, err := e.svc.Order(ctx, "a", o.ID)
			wantCode(t, err, "order_not_found")
			closeAll(t, e, slug, m)

			// Cancelled on the exchange outside exhub.
			c := place(1.5)
			sup, _ := e.host.Get(slug)
			acct, _ := e.acc.AccountRef(ctx, "b", slug)
			if err := sup.Call(ctx, "CancelAlgoOrder", func(ctx context.Context, cl exchangev1.ExchangeClient) error {
				_, err := cl.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: acct,
					MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, Symbol: m.symbol, AlgoId: c.ExchangeOrderID})
				return err
			}); err != nil {
				t.Fatalf("cancelling on the exchange: %v", err)
			}
			if s := journalStatus(t, e.svc, "b", c.ID); s != StatusWaiting {
				t.Fatalf("before reconciliation the journal says %s", s)
			}
			before := e.svc.Stats().ReconcileUpdates
			eventually(t, "the journal shows the stop cancelled", func() (string, bool) {
				e.svc.Reconcile(slug)
				s := journalStatus(t, e.svc, "b", c.ID)
				return s, s == StatusCancelled
			})
			if got := e.svc.Stats().ReconcileUpdates; got <= before {
				t.Fatalf("reconciliation updates counted %d -> %d", before, got)
			}
		})
	}

	// The account stream alone: lookups and periodic reconciliation pushed an hour out.
	e.stopLoop()
	mgr := accountstream.New(accountstream.Options{Source: accountstream.HostSource{Host: e.host},
		Accounts: streamAccounts{e.acc}})
	mctx, mcancel := context.WithCancel(context.Background())
	mdone := make(chan struct{})
	go func() { defer close(mdone); _ = mgr.Run(mctx) }()
	t.Cleanup(func() { mcancel(); <-mdone })
	cfg := e.svc.cfg
	hour := setting.Duration(time.Hour)
	cfg.ResolveInitial, cfg.ResolveMax, cfg.ReconcileInterval = hour, hour, hour
	wf := &watchedFeed{sub: mgr, snapshots: map[string]int{}}
	svc, err := New(cfg, e.st, e.host, e.acc, WithAccountFeed(wf))
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.start()
	for _, slug := range []string{"binance", "okx"} {
		t.Run(slug+"/stream", func(t *testing.T) {
			m := e.market(t, slug, "SWAP")
			ctx := ctxT(t)
			v := e.venues[slug]
			if err := v.SetMarkPrice(e.perp[slug], m.last); err != nil {
				t.Fatal(err)
			}
			seen := wf.seen("b/" + slug) // nothing of b's is followed yet: the stream opens for the stop order
			trig := m.price(1.2)
			o, err := e.svc.PlaceAlgo(ctx, "b", newKey(), AlgoRequest{Exchange: slug, MarketType: "SWAP", Symbol: m.symbol,
				Side: "BUY", Type: "STOP_MARKET", TriggerPrice: trig, TriggerPriceType: "MARK", MarginMode: "CROSS",
				Qty: m.qty(trig, 1)})
			if err != nil || (StatusOf(o) != StatusWaiting && StatusOf(o) != StatusPending) {
				t.Fatalf("stop order: %+v %v", o, err)
			}
			// A lost answer is resolved by the stream's algo order event (lookups are an hour out).
			e.waitStatus(t, o.ID, StatusWaiting)
			eventually(t, "the service follows b's account (a snapshot after the stop order)", func() (string, bool) {
				n := wf.seen("b/" + slug)
				return fmt.Sprint(n), n > seen
			})
			before := e.svc.Stats().Reconciliations
			if err := v.SetMarkPrice(e.perp[slug], dec(m.price(1.25))); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the journal shows the stop triggered", func() (string, bool) {
				s := journalStatus(t, e.svc, "b", o.ID)
				return s, s == StatusTriggered
			})
			if got := e.svc.Stats().Reconciliations; got != before {
				t.Fatalf("a reconciliation ran (%d -> %d): the stream alone was to record the trigger", before, got)
			}
			closeAll(t, e, slug, m)
		})
	}
}
