package wallet

import (
	"fmt"
	"net/http"
	"time"
)

// CodeSecondFactorStale is the refusal of money leaving the account (a withdrawal, a transfer to another exchange, a
// gift) when the member has an authenticator app and this session last completed the second factor longer than
// second_factor_window ago: the member enters a current code again (Kratos' login flow with refresh=true and
// aal=aal2) and confirms once more.
const CodeSecondFactorStale = "second_factor_stale"

// secondFactor is the second-factor rule of money leaving the member's accounts: a member with an authenticator app
// needs a session that passed it (aal2_required) within the wallet's second_factor_window (second_factor_stale).
// Members without an authenticator are not asked.
func (s *Service) secondFactor(c Caller) error {
	if !c.TwoFactor {
		return nil
	}
	if c.AAL != "aal2" {
		return refuse(http.StatusForbidden, "aal2_required", "",
			"Confirm this session with your authenticator app code before withdrawing.")
	}
	if s.SecondFactorStale(c) {
		return refuse(http.StatusForbidden, CodeSecondFactorStale, "", fmt.Sprintf(
			"Enter your authenticator app code again: money leaves your account only within %s of the code.",
			minutes(s.cfg.SecondFactorWindow.D())))
	}
	return nil
}

// SecondFactorStale says whether c has an authenticator app and its session's last second factor is older than
// second_factor_window (or unknown): the API asks Kratos again, past its session cache, before refusing.
func (s *Service) SecondFactorStale(c Caller) bool {
	return c.TwoFactor && (c.SecondFactorAt.IsZero() || s.now().Sub(c.SecondFactorAt) > s.cfg.SecondFactorWindow.D())
}

// minutes says a window the way a member reads it: "5 minutes", "1 minute", else Go's duration ("90s").
func minutes(d time.Duration) string {
	switch {
	case d == time.Minute:
		return "1 minute"
	case d > 0 && d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}
