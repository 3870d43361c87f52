package okx_test

import (
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// TestDepositHistoryPages: deposits read page by page (many share a millisecond, so pages end inside such
// groups) come out exactly once each, newest first; a range gives its newest rows.
func TestDepositHistoryPages(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	acct := &exchangev1.AccountRef{AccountId: "h", ApiKey: historyKey, ApiSecret: "h-secret", Passphrase: "h-pass"}
	var groups [][]string   // deposit ids by venue millisecond, oldest group first
	var first, last []int64 // each group's first and last deposit time
	for range 4 {
		var ids []string
		var ts []int64
		for range 3 {
			tx, err := w.v.Deposit(ctx, historyAccount, "USDT", decimal.NewFromInt(1))
			if err != nil {
				t.Fatal(err)
			}
			ids, ts = append(ids, tx.ID), append(ts, tx.Time)
		}
		groups, first, last = append(groups, ids), append(first, ts[0]), append(last, ts[2])
		deadline := time.Now().Add(30 * time.Second)
		for w.v.Now() <= ts[2] { // the next group lands in a later millisecond
			if time.Now().After(deadline) {
				t.Fatal("the venue clock does not move")
			}
			time.Sleep(time.Millisecond)
		}
	}
	all, err := w.c.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: acct})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range all.GetDeposits() {
		want = append(want, d.GetId())
	}
	if len(want) < 12 || all.GetNextCursor() != "" {
		t.Fatalf("whole history: %d rows, cursor %q", len(want), all.GetNextCursor())
	}
	for _, g := range groups {
		for _, id := range g {
			if !slices.Contains(want, id) {
				t.Fatalf("deposit %s missing from %v", id, want)
			}
		}
	}
	for _, limit := range []int32{1, 2, 5} {
		var got []string
		cursor := ""
		for range 50 {
			r, err := w.c.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: acct, Page: &exchangev1.HistoryPage{Limit: limit, Cursor: cursor}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.GetDeposits()) > int(limit) {
				t.Fatalf("limit %d: page of %d", limit, len(r.GetDeposits()))
			}
			for _, d := range r.GetDeposits() {
				got = append(got, d.GetId())
			}
			if cursor = r.GetNextCursor(); cursor == "" {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: pages give %v, want %v", limit, got, want)
		}
	}
	// The range of the middle two groups: the newest two rows are the last two of the third group.
	r, err := w.c.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: acct, Page: &exchangev1.HistoryPage{StartTime: first[1], EndTime: last[2], Limit: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetDeposits()) != 2 || r.GetDeposits()[0].GetId() != groups[2][2] || r.GetDeposits()[1].GetId() != groups[2][1] || r.GetNextCursor() == "" {
		t.Fatalf("range page: %v cursor %q", r.GetDeposits(), r.GetNextCursor())
	}
	var rest []string
	for cursor := r.GetNextCursor(); cursor != ""; {
		p, err := w.c.ListDeposits(ctx, &exchangev1.ListDepositsRequest{Account: acct, Page: &exchangev1.HistoryPage{StartTime: first[1], EndTime: last[2], Limit: 2, Cursor: cursor}})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range p.GetDeposits() {
			rest = append(rest, d.GetId())
		}
		cursor = p.GetNextCursor()
	}
	if wantRest := []string{groups[2][0], groups[1][2], groups[1][1], groups[1][0]}; !slices.Equal(rest, wantRest) {
		t.Fatalf("rest of the range %v, want %v", rest, wantRest)
	}
}

// TestTransferHistoryPages: transfers both ways come from the funding account's bills; read page by page they come
// out exactly once each, newest first, with the direction of each.
func TestTransferHistoryPages(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	acct := &exchangev1.AccountRef{AccountId: "h", ApiKey: historyKey, ApiSecret: "h-secret", Passphrase: "h-pass"}
	if _, err := w.v.Deposit(ctx, historyAccount, "USDT", decimal.NewFromInt(100)); err != nil {
		t.Fatal(err)
	}
	funding, trading := exchangev1.WalletType_WALLET_TYPE_FUNDING, exchangev1.WalletType_WALLET_TYPE_TRADING
	var made []string // client ids, oldest first
	for k := range 7 {
		from, to := funding, trading
		if k%2 == 1 {
			from, to = trading, funding
		}
		cid := uniqueID("th")
		if _, err := w.c.Transfer(ctx, &exchangev1.TransferRequest{Account: acct, Asset: "USDT", Amount: "2", From: from, To: to, ClientId: cid}); err != nil {
			t.Fatal(err)
		}
		made = append(made, cid)
	}
	all, err := w.c.ListTransfers(ctx, &exchangev1.ListTransfersRequest{Account: acct, Asset: "USDT"})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range all.GetTransfers() {
		want = append(want, r.GetId())
	}
	if all.GetNextCursor() != "" || len(all.GetTransfers()) < len(made) {
		t.Fatalf("whole history: %v cursor %q", all.GetTransfers(), all.GetNextCursor())
	}
	newest := all.GetTransfers()[:len(made)]
	for k, r := range newest {
		m := len(made) - 1 - k
		wantFrom := funding
		if m%2 == 1 {
			wantFrom = trading
		}
		if r.GetClientId() != made[m] || r.GetFrom() != wantFrom || r.GetAmount() != "2" || r.GetTime() == 0 {
			t.Fatalf("transfer %d: %v, want client id %s from %v", k, r, made[m], wantFrom)
		}
	}
	for _, limit := range []int32{1, 2, 3} {
		var got []string
		cursor := ""
		for range 50 {
			r, err := w.c.ListTransfers(ctx, &exchangev1.ListTransfersRequest{Account: acct, Asset: "USDT", Page: &exchangev1.HistoryPage{Limit: limit, Cursor: cursor}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.GetTransfers()) > int(limit) {
				t.Fatalf("limit %d: page of %d", limit, len(r.GetTransfers()))
			}
			for _, x := range r.GetTransfers() {
				got = append(got, x.GetId())
			}
			if cursor = r.GetNextCursor(); cursor == "" {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: pages give %v, want %v", limit, got, want)
		}
	}
	// A range ending at the newest transfer's time holds it.
	r, err := w.c.ListTransfers(ctx, &exchangev1.ListTransfersRequest{Account: acct, Page: &exchangev1.HistoryPage{
		StartTime: newest[0].GetTime(), EndTime: newest[0].GetTime(), Limit: 1}})
	if err != nil || len(r.GetTransfers()) != 1 || r.GetTransfers()[0].GetTime() != newest[0].GetTime() {
		t.Fatalf("range page: %v %v", r, err)
	}
	if _, err := w.c.ListTransfers(ctx, &exchangev1.ListTransfersRequest{Account: acct, Page: &exchangev1.HistoryPage{Cursor: "not-ours"}}); err == nil {
		t.Fatal("a foreign cursor was accepted")
	}
}

// TestAlgoHistoryPages: waiting and finished algo orders read page by page come out exactly once each, newest
// first, also when an order moves from waiting to cancelled between two pages.
func TestAlgoHistoryPages(t *testing.T) {
	w := shared(t)
	ctx := t.Context()
	acct := &exchangev1.AccountRef{AccountId: "h", ApiKey: historyKey, ApiSecret: "h-secret", Passphrase: "h-pass"}
	spot := exchangev1.MarketType_MARKET_TYPE_SPOT
	if _, err := w.v.Deposit(ctx, historyAccount, "BTC", decimal.RequireFromString("0.01")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.v.Transfer(ctx, historyAccount, "BTC", decimal.RequireFromString("0.01"), venue.Funding, venue.TradingWallet); err != nil {
		t.Fatal(err)
	}
	bid, _ := bestBid(t, w, spot, "BTC-USDT")
	trig := bid.Mul(decimal.RequireFromString("0.5")).Round(1).String()
	var ids []string // oldest first
	for range 6 {
		a, err := w.c.PlaceAlgoOrder(ctx, &exchangev1.PlaceAlgoOrderRequest{Account: acct, MarketType: spot, Symbol: "BTC-USDT",
			Side: exchangev1.Side_SIDE_SELL, Type: exchangev1.OrderType_ORDER_TYPE_STOP_MARKET, TriggerPrice: trig, Qty: "0.001"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.GetAlgoOrder().GetAlgoId())
	}
	cancel := func(id string) {
		t.Helper()
		if _, err := w.c.CancelAlgoOrder(ctx, &exchangev1.CancelAlgoOrderRequest{Account: acct, MarketType: spot, Symbol: "BTC-USDT", AlgoId: id}); err != nil {
			t.Fatal(err)
		}
	}
	cancel(ids[1])
	cancel(ids[3])
	list := func(limit int32, cursor string, history bool) *exchangev1.ListAlgoOrdersResponse {
		t.Helper()
		r, err := w.c.ListAlgoOrders(ctx, &exchangev1.ListAlgoOrdersRequest{Account: acct, MarketType: spot, IncludeHistory: history,
			Page: &exchangev1.HistoryPage{Limit: limit, Cursor: cursor}})
		if err != nil {
			t.Fatal(err)
		}
		if limit > 0 && len(r.GetAlgoOrders()) > int(limit) {
			t.Fatalf("limit %d: page of %d", limit, len(r.GetAlgoOrders()))
		}
		return r
	}
	idsOf := func(r *exchangev1.ListAlgoOrdersResponse) (out []string) {
		for _, a := range r.GetAlgoOrders() {
			out = append(out, a.GetAlgoId())
		}
		return out
	}
	all := list(0, "", true)
	want := idsOf(all)
	if all.GetNextCursor() != "" || len(want) < len(ids) {
		t.Fatalf("whole history: %v cursor %q", want, all.GetNextCursor())
	}
	for k := range ids {
		if want[k] != ids[len(ids)-1-k] {
			t.Fatalf("history %v, want the newest %v newest first", want, ids)
		}
	}
	if got := idsOf(list(0, "", false)); !slices.Equal(got, []string{ids[5], ids[4], ids[2], ids[0]}) {
		t.Fatalf("waiting %v", got)
	}
	for _, limit := range []int32{1, 2, 4} {
		var got []string
		cursor := ""
		for range 50 {
			r := list(limit, cursor, true)
			got = append(got, idsOf(r)...)
			if cursor = r.GetNextCursor(); cursor == "" {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: pages give %v, want %v", limit, got, want)
		}
	}
	// ids[2] waits when the first page is read and is cancelled before the second: it is listed once.
	first := list(3, "", true)
	if got := idsOf(first); !slices.Equal(got, want[:3]) || first.GetNextCursor() == "" {
		t.Fatalf("first page %v", got)
	}
	cancel(ids[2])
	got := idsOf(first)
	for cursor := first.GetNextCursor(); cursor != ""; {
		r := list(3, cursor, true)
		got = append(got, idsOf(r)...)
		cursor = r.GetNextCursor()
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages around a cancel give %v, want %v", got, want)
	}
	for _, id := range []string{ids[0], ids[4], ids[5]} {
		cancel(id)
	}
}
