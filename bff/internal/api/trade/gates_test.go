package trade_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/exhub/exhub/bff/internal/servicegate"
)

// kycFlags is a fake KYC source: member -> exchange -> verified.
type kycFlags struct {
	mu sync.Mutex
	m  map[string]map[string]bool
}

func (k *kycFlags) ExchangeKYC(_ context.Context, member string) (map[string]bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]bool{}
	for ex, v := range k.m[member] {
		out[ex] = v
	}
	return out, nil
}

func (k *kycFlags) set(member, exchange string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m[member] == nil {
		k.m[member] = map[string]bool{}
	}
	k.m[member][exchange] = true
}

// Trading on an exchange whose config needs two-factor authentication and KYC: a member without them is refused
// with 403 and the typed reason (two-factor first, then KYC), reads and cancels stay open, and the member with both
// places the order. GET /api/v1/service-gates says what each member lacks.
func TestServiceGates(t *testing.T) {
	flags := &kycFlags{m: map[string]map[string]bool{}}
	gates := servicegate.New(map[string]servicegate.Rules{"reference": {
		servicegate.Trading:  {servicegate.TwoFactor, servicegate.KYC},
		servicegate.Withdraw: {servicegate.KYC},
	}}, map[string]string{"reference": "Reference"}, flags)
	e := newEnvGated(t, false, guard{}, accounts{}, gates)
	e.twoFactor = map[string]bool{}

	place := func(member string) answer {
		return e.do(member, http.MethodPost, "/api/v1/orders", key(), order("SWAP", "BUY", "LIMIT", "20000", "0.001"))
	}
	refused := func(a answer, code string) {
		t.Helper()
		if a.status != http.StatusForbidden || a.ctype != "application/problem+json" || a.str("code") != code || a.str("detail") == "" {
			t.Fatalf("want 403 %s: %d %s %s", code, a.status, a.ctype, a.raw)
		}
	}
	gatesOf := func(member string) map[string]map[string]any {
		t.Helper()
		a := e.want(e.do(member, http.MethodGet, "/api/v1/service-gates?exchange=reference", "", nil), 200)
		out := map[string]map[string]any{}
		for _, x := range a.body["services"].([]any) {
			m := x.(map[string]any)
			out[m["service"].(string)] = m
		}
		return out
	}

	// a: neither two-factor nor KYC.
	refused(place("a"), "two_factor_required")
	refused(e.do("a", http.MethodPut, "/api/v1/leverage", "", map[string]any{"exchange": "reference", "symbol": "BTCUSDT", "leverage": "3"}), "two_factor_required")
	refused(e.do("a", http.MethodPut, "/api/v1/position-mode", "", map[string]any{"exchange": "reference", "mode": "HEDGE"}), "two_factor_required")
	e.want(e.do("a", http.MethodGet, "/api/v1/positions?exchange=reference", "", nil), 200)
	e.want(e.do("a", http.MethodGet, "/api/v1/orders?exchange=reference&market_type=SWAP&status=open", "", nil), 200)
	g := gatesOf("a")
	if g["trading"]["code"] != "two_factor_required" || len(g["trading"]["missing"].([]any)) != 2 ||
		g["withdraw"]["code"] != "kyc_required" || g["transfer"]["code"] != nil || len(g["transfer"]["required"].([]any)) != 0 {
		t.Fatalf("gates of a: %+v", g)
	}

	// a with two-factor but no KYC.
	e.twoFactor["a"] = true
	refused(place("a"), "kyc_required")
	if g := gatesOf("a"); g["trading"]["code"] != "kyc_required" || len(g["trading"]["missing"].([]any)) != 1 {
		t.Fatalf("gates of a with 2FA: %+v", g)
	}

	// b with KYC but no two-factor.
	flags.set("b", "reference")
	refused(place("b"), "two_factor_required")
	if g := gatesOf("b"); g["withdraw"]["code"] != nil || g["trading"]["code"] != "two_factor_required" {
		t.Fatalf("gates of b: %+v", g)
	}

	// b with both: the order is placed, amended and cancelled.
	e.twoFactor["b"] = true
	o := place("b")
	if o.status != http.StatusCreated {
		t.Fatalf("place with 2FA and KYC: %d %s", o.status, o.raw)
	}
	id := o.str("id")
	e.eventuallyStatus("b", id, "open")
	if a := e.do("b", http.MethodPatch, "/api/v1/orders/"+id, "", map[string]any{"price": "20001"}); a.status != http.StatusOK && a.status != http.StatusAccepted {
		t.Fatalf("amend: %d %s", a.status, a.raw)
	}
	// Losing two-factor blocks the amend, never the cancel.
	e.twoFactor["b"] = false
	refused(e.do("b", http.MethodPatch, "/api/v1/orders/"+id, "", map[string]any{"price": "20002"}), "two_factor_required")
	if a := e.do("b", http.MethodDelete, "/api/v1/orders/"+id, "", nil); a.status != http.StatusOK && a.status != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", a.status, a.raw)
	}
	if g := gatesOf("b"); g["trading"]["code"] != "two_factor_required" {
		t.Fatalf("gates of b without 2FA: %+v", g)
	}
	// No session: 401.
	if a := e.do("", http.MethodGet, "/api/v1/service-gates?exchange=reference", "", nil); a.status != http.StatusUnauthorized {
		t.Fatalf("no session: %d", a.status)
	}
}
