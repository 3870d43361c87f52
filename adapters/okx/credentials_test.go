package okx

import (
	"testing"
	"time"
)

// The prehash and secret follow OKX's documented example (timestamp 2020-12-08T09:08:57.715Z, secret
// 22582BD0CFF14C41EDBF1AB98506286D, the set-leverage body); the expected signatures were computed independently with
// openssl (HMAC-SHA256, then Base64).
func TestSign(t *testing.T) {
	const secret = "22582BD0CFF14C41EDBF1AB98506286D"
	ts := RESTTimestamp(time.Date(2020, 12, 8, 9, 8, 57, 715_000_000, time.UTC))
	if ts != "2020-12-08T09:08:57.715Z" {
		t.Fatalf("timestamp %s", ts)
	}
	cases := []struct{ method, path, body, want string }{
		{"GET", "/api/v5/account/balance?ccy=BTC", "", "HiZhvSfMtWJA3uUIVXV3a/bSXNPCWvYFXoGCVS8V4zY="},
		{"POST", "/api/v5/account/set-leverage", `{"instId":"BTC-USDT","lever":"5","mgnMode":"isolated"}`, "eCnnCgWLjlQ9XnpUkrcny3qNq3WW/81KNrDr/XR6Xv8="},
	}
	for _, c := range cases {
		if got := Sign(secret, ts, c.method, c.path, c.body); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.method, c.path, got, c.want)
		}
	}
	lts, sign := LoginSign(secret, 1538054050)
	if lts != "1538054050" || sign != "+LdIr8lkkvhr5hoA3g9TMC0+uQJ849ftAcocA/ouu4M=" {
		t.Errorf("login sign %s %s", lts, sign)
	}
}
