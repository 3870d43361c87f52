package member

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/exhub/exhub/bff/internal/store"
)

// HookPathPrefix is where the BFF serves Kratos' web hooks: POST {prefix}registration, {prefix}login and
// {prefix}settings. The edge never routes it (only /api/* and /.ory/self-service/* reach the BFF from outside);
// Kratos posts to the BFF's own address.
const HookPathPrefix = "/internal/kratos/hooks/"

const nilUUID = "00000000-0000-0000-0000-000000000000"

// maxHookBody bounds a hook's request body.
const maxHookBody = 64 << 10

// hookPayload is what the jsonnet bodies in bff/kratos/hooks/ send.
type hookPayload struct {
	IdentityID string `json:"identity_id"`
	Traits     traits `json:"traits"`
	// FlowIssuedAt is when the settings flow began; Addresses are the identity's verifiable addresses after the
	// change. An address created after the flow began was added by it.
	FlowIssuedAt time.Time `json:"flow_issued_at"`
	Addresses    []struct {
		Via       string    `json:"via"`
		CreatedAt time.Time `json:"created_at"`
	} `json:"addresses"`
	SessionID       string    `json:"session_id"`
	AuthenticatedAt time.Time `json:"authenticated_at"`
	// IP is the session device's address as Kratos saw it (login).
	IP string `json:"ip"`
	// TrueClientIP is the True-Client-Ip header of the request to Kratos (the only forwarding header Kratos passes
	// to web hooks).
	TrueClientIP string `json:"true_client_ip"`
}

func (p hookPayload) clientIP() string {
	if ip := cleanIP(p.IP); ip != "" {
		return ip
	}
	return cleanIP(p.TrueClientIP)
}

// cleanIP returns the address in s ("1.2.3.4", "1.2.3.4:5678", "[::1]:80"), or "" when s holds none.
func cleanIP(s string) string {
	s = strings.TrimSpace(s)
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return ""
	}
	return a.Unmap().String()
}

// Hooks is the http.Handler for Kratos' web hooks under HookPathPrefix. Each request must carry the configured
// secret as the password of HTTP basic authentication (compared in constant time; Kratos' logs redact the
// Authorization header, not others); without a configured secret every hook is 404. Answers: 204
// done, 400 bad body, 401 wrong secret, 404 unknown hook, 405 not POST, 500 store failure (Kratos logs it and goes
// on: the hooks ignore the response).
func (s *Service) Hooks() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind, ok := strings.CutPrefix(r.URL.Path, HookPathPrefix)
		secret := s.cfg.HookSecret.Reveal()
		if !ok || secret == "" || (kind != "registration" && kind != "login" && kind != "settings") {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		_, password, _ := r.BasicAuth()
		if subtle.ConstantTimeCompare([]byte(password), []byte(secret)) != 1 {
			s.log.Warn("kratos hook refused: wrong secret", "hook", kind, "remote", r.RemoteAddr)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var p hookPayload
		dec := json.NewDecoder(io.LimitReader(r.Body, maxHookBody))
		if err := dec.Decode(&p); err != nil || p.IdentityID == "" {
			s.log.Warn("kratos hook: bad body", "hook", kind, "err", err)
			http.Error(w, "bad hook body", http.StatusBadRequest)
			return
		}
		if err := s.handleHook(r, kind, r.URL.Query().Get("method"), p); err != nil {
			s.log.Error("kratos hook failed", "hook", kind, "member", p.IdentityID, "err", err)
			status := http.StatusInternalServerError
			if errors.Is(err, store.ErrInvalid) {
				status = http.StatusBadRequest
			}
			http.Error(w, "hook failed", status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func (s *Service) handleHook(r *http.Request, kind, method string, p hookPayload) error {
	ctx := r.Context()
	switch kind {
	case "registration":
		_, err := s.ensure(ctx, p.IdentityID, p.Traits)
		return err
	case "login":
		if p.SessionID == nilUUID { // Kratos runs the login hooks before the session gets its id
			p.SessionID = ""
		}
		return s.RecordLogin(ctx, p.IdentityID, p.Traits, store.Login{At: p.AuthenticatedAt, IP: p.clientIP(),
			SessionID: p.SessionID})
	default: // settings
		// The settings hooks are one per method, named by the URL's method parameter (Kratos' hook context does
		// not say which method ran).
		var kinds []string
		switch method {
		case "password":
			kinds = []string{store.SecurityPassword}
		case "totp":
			kinds = []string{store.SecurityTOTP}
		case "lookup_secret":
			// New recovery codes replace the second factor's fallback: a security change of its own kind.
			kinds = []string{store.SecurityRecoveryCodes}
		case "profile":
			// A profile change that added an address (a new or changed e-mail or mobile; Kratos creates a new
			// verifiable address for a new value) is a security change. Nickname or locale changes are not.
			if p.FlowIssuedAt.IsZero() {
				s.log.Warn("kratos settings hook without the flow's start; e-mail and mobile changes not detected",
					"member", p.IdentityID)
				break
			}
			seen := map[string]bool{}
			for _, a := range p.Addresses {
				if a.CreatedAt.Before(p.FlowIssuedAt) || seen[a.Via] {
					continue
				}
				seen[a.Via] = true
				switch a.Via {
				case "email":
					kinds = append(kinds, store.SecurityEmail)
				case "sms":
					kinds = append(kinds, store.SecurityMobile)
				}
			}
		default:
			return fmt.Errorf("%w: settings hook method %q", store.ErrInvalid, method)
		}
		if len(kinds) == 0 {
			s.log.Debug("kratos settings hook: no security change", "member", p.IdentityID, "method", method)
		}
		for _, k := range kinds {
			if err := s.SecurityChange(ctx, p.IdentityID, k, p.clientIP()); err != nil {
				return err
			}
		}
		return nil
	}
}
