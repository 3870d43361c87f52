package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"time"
)

// CSRFToken is the token of a session: an HMAC of the Kratos session id under the CSRF key (signed double-submit).
// A sibling host that can plant cookies cannot forge it without the key, and it is worthless for another session.
func (c *Checker) CSRFToken(sessionID string) string {
	mac := hmac.New(sha256.New, []byte(c.cfg.CSRFKey.Reveal()))
	mac.Write([]byte("exhub-csrf\x00"))
	mac.Write([]byte(sessionID))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// CSRFCookie is the cookie carrying m's token: readable by the UI's scripts, SameSite=Strict, path /, living as long
// as the session.
func (c *Checker) CSRFCookie(m *Member) *http.Cookie {
	ck := &http.Cookie{
		Name: c.cfg.CSRFCookie, Value: c.CSRFToken(m.SessionID), Path: "/",
		SameSite: http.SameSiteStrictMode, Secure: c.cfg.CookieSecure,
	}
	if !m.ExpiresAt.IsZero() {
		ck.Expires = m.ExpiresAt.UTC()
		ck.MaxAge = int(time.Until(m.ExpiresAt) / time.Second)
		if ck.MaxAge <= 0 {
			ck.MaxAge = -1
		}
	}
	return ck
}

// Unsafe says whether method changes state (POST, PUT, PATCH, DELETE and anything not read-only).
func Unsafe(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return true
}

// CheckOrigin accepts a request whose Origin, or Referer when Origin is absent, is an allowed origin.
func (c *Checker) CheckOrigin(origin, referer string) *Problem {
	src := origin
	if src == "" || src == "null" {
		src = referer
	}
	if o := normOrigin(src); o != "" {
		for _, a := range c.cfg.AllowedOrigins {
			if normOrigin(a) == o {
				return nil
			}
		}
	}
	return newProblem(http.StatusForbidden, CodeOriginRefused, "the request's origin is not allowed")
}

// CheckCSRF accepts a request whose header token equals its cookie token and is the token of m's session.
func (c *Checker) CheckCSRF(m *Member, header, cookie string) *Problem {
	want := c.CSRFToken(m.SessionID)
	if header == "" || subtle.ConstantTimeCompare([]byte(header), []byte(cookie)) != 1 ||
		subtle.ConstantTimeCompare([]byte(header), []byte(want)) != 1 {
		return newProblem(http.StatusForbidden, CodeCSRFRefused, "missing or wrong CSRF token; reload the page")
	}
	return nil
}

// cookieValue reads one cookie of a Cookie header, skipping malformed pairs.
func cookieValue(header, name string) string {
	for _, c := range (&http.Request{Header: http.Header{"Cookie": {header}}}).Cookies() {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}
