package wallet

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/exhub/exhub/bff/internal/config/setting"
)

// TestSecondFactorRule: a member with an authenticator app moves money out only from an aal2 session whose last
// second factor is within second_factor_window; members without one are never asked.
func TestSecondFactorRule(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	cfg := Defaults()
	s := &Service{cfg: cfg, now: func() time.Time { return now }}
	for _, tc := range []struct {
		name string
		c    Caller
		code string
	}{
		{"no authenticator, no factor", Caller{ID: "a", AAL: "aal1"}, ""},
		{"no authenticator, old session", Caller{ID: "a", AAL: "aal1", SecondFactorAt: now.Add(-time.Hour)}, ""},
		{"fresh", Caller{ID: "a", TwoFactor: true, AAL: "aal2", SecondFactorAt: now.Add(-time.Minute)}, ""},
		{"at the window's end", Caller{ID: "a", TwoFactor: true, AAL: "aal2", SecondFactorAt: now.Add(-5 * time.Minute)}, ""},
		{"past the window", Caller{ID: "a", TwoFactor: true, AAL: "aal2", SecondFactorAt: now.Add(-5*time.Minute - time.Second)}, CodeSecondFactorStale},
		{"never completed", Caller{ID: "a", TwoFactor: true, AAL: "aal2"}, CodeSecondFactorStale},
		{"aal1", Caller{ID: "a", TwoFactor: true, AAL: "aal1", SecondFactorAt: now}, "aal2_required"},
	} {
		err := s.secondFactor(tc.c)
		var we *Error
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v, want accepted", tc.name, err)
		case tc.code != "" && (!errors.As(err, &we) || we.Code != tc.code || we.Status != http.StatusForbidden):
			t.Errorf("%s: %v, want 403 %s", tc.name, err, tc.code)
		case tc.code == CodeSecondFactorStale && !strings.Contains(we.Message, "5 minutes"):
			t.Errorf("%s: message %q names no window", tc.name, we.Message)
		}
		if got := s.SecondFactorStale(tc.c); got != (tc.code == CodeSecondFactorStale) {
			t.Errorf("%s: SecondFactorStale %v", tc.name, got)
		}
	}

	for _, d := range []time.Duration{0, -time.Second} {
		cfg.SecondFactorWindow = setting.Duration(d)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "second_factor_window") {
			t.Errorf("second_factor_window %s: %v", d, err)
		}
	}
	if minutes(time.Minute) != "1 minute" || minutes(90*time.Second) != "1m30s" || minutes(10*time.Minute) != "10 minutes" {
		t.Error("minutes")
	}
}
