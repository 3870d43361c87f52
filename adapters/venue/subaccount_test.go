package venue

import (
	"errors"
	"testing"
)

func TestSubAccounts(t *testing.T) {
	f := newFixture(t)
	f.fund("master", "1000", "0")
	sa, err := f.v.CreateSubAccount(f.ctx, "master", "master/sub1", "member-1")
	if err != nil || sa.ID != "master/sub1" || sa.Label != "member-1" {
		t.Fatalf("create: %+v %v", sa, err)
	}
	again, err := f.v.CreateSubAccount(f.ctx, "master", "master/sub2", "member-1")
	if !errors.Is(err, ErrSubAccountExists) || again.ID != sa.ID {
		t.Fatalf("a repeated label must return the first sub-account: %+v %v", again, err)
	}
	if _, err := f.v.CreateSubAccount(f.ctx, "master/sub1", "x", "y"); !errors.Is(err, ErrNotMaster) {
		t.Fatalf("a sub-account owning sub-accounts: %v", err)
	}
	f.fund("other", "10", "0")
	if _, err := f.v.SubAccountOf("other", sa.ID); !errors.Is(err, ErrUnknownSubAccount) {
		t.Fatalf("another master sees the sub-account: %v", err)
	}
	if m := f.v.MasterOf(sa.ID); m != "master" {
		t.Fatalf("MasterOf = %q", m)
	}

	req := SubTransferRequest{Master: "master", To: sa.ID, Asset: "USDT", Amount: d("123.45678901"), Wallet: TradingWallet, ClientID: "c1"}
	tr, err := f.v.TransferSub(f.ctx, req)
	if err != nil || tr.From != "master" || tr.To != sa.ID {
		t.Fatalf("transfer: %+v %v", tr, err)
	}
	eq(t, "sub USDT", f.bal(sa.ID, "USDT").Total, "123.45678901")
	eq(t, "master USDT", f.bal("master", "USDT").Total, "876.54321099")
	dup, err := f.v.TransferSub(f.ctx, req)
	if !errors.Is(err, ErrDuplicateClientID) || dup.ID != tr.ID {
		t.Fatalf("a repeated client id: %+v %v", dup, err)
	}
	eq(t, "sub USDT after the repeat", f.bal(sa.ID, "USDT").Total, "123.45678901")
	if _, err := f.v.TransferSub(f.ctx, SubTransferRequest{Master: "master", From: sa.ID, Asset: "USDT", Amount: d("200"),
		Wallet: TradingWallet, ClientID: "c2"}); !errors.Is(err, ErrInsufficientFunds) {
		t.Fatalf("overdraw: %v", err)
	}
	if _, err := f.v.TransferSub(f.ctx, SubTransferRequest{Master: "other", To: sa.ID, Asset: "USDT", Amount: d("1"),
		Wallet: TradingWallet, ClientID: "c3"}); !errors.Is(err, ErrUnknownSubAccount) {
		t.Fatalf("another master funds the sub-account: %v", err)
	}
	back, err := f.v.TransferSub(f.ctx, SubTransferRequest{Master: "master", From: sa.ID, Asset: "USDT", Amount: d("0.45678901"),
		Wallet: TradingWallet, ClientID: "c4"})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "sub USDT after the return", f.bal(sa.ID, "USDT").Total, "123")
	ts, err := f.v.SubTransfers("master", "", "", 0)
	if err != nil || len(ts) != 2 || ts[0].ID != back.ID {
		t.Fatalf("history newest first: %+v %v", ts, err)
	}
	one, err := f.v.SubTransfers("master", "c1", "", 0)
	if err != nil || len(one) != 1 || one[0].ID != tr.ID {
		t.Fatalf("by client id: %+v %v", one, err)
	}
	// The sub-account trades like any account.
	f.limit(sa.ID, "TST/USDT", Buy, "10", "1")
	subs, err := f.v.SubAccounts("master")
	if err != nil || len(subs) != 1 {
		t.Fatalf("list: %+v %v", subs, err)
	}
}
