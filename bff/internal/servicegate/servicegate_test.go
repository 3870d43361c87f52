package servicegate

import (
	"context"
	"errors"
	"slices"
	"testing"
)

type flags map[string]map[string]bool

func (f flags) ExchangeKYC(_ context.Context, m string) (map[string]bool, error) {
	if m == "broken" {
		return nil, errors.New("store down")
	}
	return f[m], nil
}

func TestCheck(t *testing.T) {
	c := New(map[string]Rules{"binance": {Trading: {KYC, TwoFactor}, Withdraw: {KYC}}}, map[string]string{"binance": "Binance"},
		flags{"k": {"binance": true, "okx": true}, "other": {"okx": true}})
	ctx := context.Background()
	cases := []struct {
		m                 Member
		exchange, service string
		code              string
		required, missing []string
	}{
		{Member{ID: "none"}, "binance", Trading, CodeTwoFactorRequired, []string{TwoFactor, KYC}, []string{TwoFactor, KYC}},
		{Member{ID: "none", TwoFactor: true}, "binance", Trading, CodeKYCRequired, []string{TwoFactor, KYC}, []string{KYC}},
		{Member{ID: "other", TwoFactor: true}, "binance", Trading, CodeKYCRequired, []string{TwoFactor, KYC}, []string{KYC}},
		{Member{ID: "k"}, "binance", Trading, CodeTwoFactorRequired, []string{TwoFactor, KYC}, []string{TwoFactor}},
		{Member{ID: "k", TwoFactor: true}, "binance", Trading, "", []string{TwoFactor, KYC}, []string{}},
		{Member{ID: "k"}, "binance", Withdraw, "", []string{KYC}, []string{}},
		{Member{ID: "none"}, "binance", Transfer, "", []string{}, []string{}},
		{Member{ID: "none"}, "okx", Trading, "", []string{}, []string{}},
	}
	for _, tc := range cases {
		st, err := c.Check(ctx, tc.m, tc.exchange, tc.service)
		if err != nil || st.Code != tc.code || !slices.Equal(st.Required, tc.required) || !slices.Equal(st.Missing, tc.missing) ||
			st.Allowed() != (tc.code == "") {
			t.Errorf("%+v %s %s: %+v %v", tc.m, tc.exchange, tc.service, st, err)
		}
	}
	if _, err := c.Check(ctx, Member{ID: "broken", TwoFactor: true}, "binance", Trading); err == nil {
		t.Error("a failing KYC lookup must be an error, not a pass")
	}
	all, err := c.CheckAll(ctx, Member{ID: "none"}, "binance")
	if err != nil || len(all) != 3 || all[0].Service != Trading || all[1].Code != CodeKYCRequired || !all[2].Allowed() {
		t.Fatalf("all: %+v %v", all, err)
	}
	var nilChecker *Checker
	if st, err := nilChecker.Check(ctx, Member{ID: "x"}, "binance", Trading); err != nil || !st.Allowed() {
		t.Fatalf("nil checker: %+v %v", st, err)
	}
	if c.Name("binance") != "Binance" || c.Name("zz") != "zz" {
		t.Fatal("names")
	}
	if d := Detail(CodeTwoFactorRequired, "Binance", Trading); d == "" || Detail(CodeKYCRequired, "OKX", Withdraw) == "" {
		t.Fatal("details")
	}
}

func TestValidate(t *testing.T) {
	if bad := (Rules{Trading: {TwoFactor, KYC}, Transfer: {}}).Validate(); len(bad) != 0 {
		t.Fatalf("valid rules refused: %v", bad)
	}
	if bad := (Rules{"lending": {KYC}, Trading: {"sms"}}).Validate(); len(bad) != 2 {
		t.Fatalf("want 2 problems: %v", bad)
	}
}
