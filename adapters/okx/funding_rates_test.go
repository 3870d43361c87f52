package okx

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

func TestFundingCacheFreshness(t *testing.T) {
	now := time.UnixMilli(1_767_225_000_000)
	c := newFundingCache()
	c.now = func() time.Time { return now }
	next := now.Add(30 * time.Minute).UnixMilli()
	c.put(rawFunding{InstID: "BTC-USDT-SWAP", FundingRate: "0.000100", FundingTime: fmt.Sprint(next)})
	c.put(rawFunding{InstID: "BAD-USDT-SWAP", FundingRate: "", FundingTime: fmt.Sprint(next)})
	c.put(rawFunding{InstID: "BAD2-USDT-SWAP", FundingRate: "0.0001", FundingTime: "x"})

	tk := &exchangev1.Ticker{Symbol: "BTC-USDT-SWAP"}
	c.fill(tk)
	if tk.GetFundingRate() != "0.0001" || tk.GetNextFundingTime() != next {
		t.Fatalf("filled %q %d", tk.GetFundingRate(), tk.GetNextFundingTime())
	}
	for _, id := range []string{"BAD-USDT-SWAP", "BAD2-USDT-SWAP", "ETH-USDT-SWAP"} {
		if _, ok := c.get(id); ok {
			t.Fatalf("%s should have no entry", id)
		}
	}
	// Stale after the TTL ...
	now = now.Add(fundingTTL)
	if _, ok := c.get("BTC-USDT-SWAP"); ok {
		t.Fatal("fresh after the TTL")
	}
	// ... and once the settlement time has passed, even when just fetched.
	c.put(rawFunding{InstID: "ETH-USDT-SWAP", FundingRate: "-0.0002", FundingTime: fmt.Sprint(now.Add(time.Second).UnixMilli())})
	if _, ok := c.get("ETH-USDT-SWAP"); !ok {
		t.Fatal("just fetched and not fresh")
	}
	now = now.Add(time.Second)
	if _, ok := c.get("ETH-USDT-SWAP"); ok {
		t.Fatal("fresh after its settlement")
	}
	tk = &exchangev1.Ticker{Symbol: "ETH-USDT-SWAP"}
	c.fill(tk)
	if tk.GetFundingRate() != "" {
		t.Fatal("stale entry filled")
	}
}

func TestFundingCacheBounded(t *testing.T) {
	now := time.UnixMilli(1_767_225_000_000)
	c := newFundingCache()
	c.now = func() time.Time { return now }
	next := fmt.Sprint(now.Add(time.Hour).UnixMilli())
	for i := range fundingMaxEntries + 10 {
		now = now.Add(time.Millisecond)
		c.put(rawFunding{InstID: fmt.Sprintf("C%d-USDT-SWAP", i), FundingRate: "0.0001", FundingTime: next})
	}
	if len(c.entries) != fundingMaxEntries {
		t.Fatalf("%d entries", len(c.entries))
	}
	// The oldest went first.
	if _, ok := c.entries["C0-USDT-SWAP"]; ok {
		t.Fatal("oldest entry kept")
	}
	if _, ok := c.entries[fmt.Sprintf("C%d-USDT-SWAP", fundingMaxEntries+9)]; !ok {
		t.Fatal("newest entry dropped")
	}
}

func TestFundingCandidates(t *testing.T) {
	now := time.UnixMilli(1_767_225_000_000)
	c := newFundingCache()
	c.now = func() time.Time { return now }
	vol := map[string]decimal.Decimal{
		"A": decimal.RequireFromString("10"), "B": decimal.RequireFromString("500.5"), "C": decimal.RequireFromString("500.4"),
		"D": decimal.RequireFromString("1"), "E": decimal.RequireFromString("900"),
	}
	// E is fresh: not a candidate.
	c.put(rawFunding{InstID: "E", FundingRate: "0.0001", FundingTime: fmt.Sprint(now.Add(time.Hour).UnixMilli())})
	got := c.candidates(map[string]bool{"D": true}, vol, 3)
	if fmt.Sprint(got) != "[D B C]" {
		t.Fatalf("candidates %v", got)
	}
	if got := c.candidates(nil, vol, 10); fmt.Sprint(got) != "[B C A D]" {
		t.Fatalf("candidates %v", got)
	}
}
