package okx_test

import (
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

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
