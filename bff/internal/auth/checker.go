// Package auth checks Kratos sessions for the BFF: it forwards the session cookie to Kratos' whoami, caches the
// answer briefly per session (a "no session" answer more briefly still), maps the outcomes to problem+json (401, 403 aal2_required, 503), puts the Member into
// the request context, and guards state-changing calls with an Origin check and a signed double-submit CSRF token.
// See README.md.
package auth

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Errors of Check. An *AAL2Error is returned when the session needs a second factor.
var (
	ErrNoSession   = errors.New("auth: no valid session")
	ErrUnavailable = errors.New("auth: identity service unavailable")
)

// AAL2Error says the session exists but the member must complete a second factor.
type AAL2Error struct {
	// RedirectTo is the UI page to send the member to.
	RedirectTo string
}

func (e *AAL2Error) Error() string { return "auth: second factor required" }

// Checker resolves a request's session to a Member. It is safe for concurrent use.
type Checker struct {
	cfg     Config
	public  *url.URL
	admin   *url.URL
	trusted []netip.Prefix
	client  *http.Client
	log     *slog.Logger
	now     func() time.Time

	mu sync.Mutex
	// good holds sessions Kratos accepted; none holds cookies it answered "no session" for. Two tables, so a storm
	// of forged cookies only ever evicts other forged cookies.
	good, none lru
	calls      map[[32]byte]*call
	// forgets counts Forget calls: a lookup that saw one while in flight does not cache its (maybe stale) answer.
	forgets uint64
}

// lru is a bounded table of answers keyed by the SHA-256 of a cookie, most recently used at the front; c.mu
// guards it.
type lru struct {
	max     int
	entries map[[32]byte]*list.Element // of *entry
	order   *list.List
}

type entry struct {
	key     [32]byte
	member  Member
	expires time.Time
}

func newLRU(max int) lru {
	return lru{max: max, entries: make(map[[32]byte]*list.Element), order: list.New()}
}

// get returns the live entry of key, dropping an expired one.
func (l *lru) get(key [32]byte, now time.Time) (*entry, bool) {
	el, ok := l.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*entry)
	if !now.Before(e.expires) {
		l.drop(el)
		return nil, false
	}
	l.order.MoveToFront(el)
	return e, true
}

// put stores m under key until expires, evicting the least recently used entries beyond max.
func (l *lru) put(key [32]byte, m Member, expires time.Time) {
	l.forget(key)
	for len(l.entries) >= l.max {
		l.drop(l.order.Back())
	}
	l.entries[key] = l.order.PushFront(&entry{key: key, member: m, expires: expires})
}

func (l *lru) forget(key [32]byte) {
	if el, ok := l.entries[key]; ok {
		l.drop(el)
	}
}

func (l *lru) drop(el *list.Element) {
	delete(l.entries, el.Value.(*entry).key)
	l.order.Remove(el)
}

type call struct {
	done   chan struct{}
	member Member
	err    error
}

// Option tunes a Checker.
type Option func(*Checker)

// WithClock sets the clock the cache runs on (tests).
func WithClock(now func() time.Time) Option { return func(c *Checker) { c.now = now } }

// WithHTTPClient sets the client used to call Kratos.
func WithHTTPClient(h *http.Client) Option { return func(c *Checker) { c.client = h } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(c *Checker) { c.log = l } }

// NewChecker validates cfg and returns a checker.
func NewChecker(cfg Config, opts ...Option) (*Checker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	public, _ := url.Parse(strings.TrimSuffix(cfg.KratosPublicURL, "/"))
	admin, _ := url.Parse(strings.TrimSuffix(cfg.KratosAdminURL, "/"))
	trusted, _ := ParsePrefixes(cfg.TrustedProxies)
	c := &Checker{
		cfg: cfg, public: public, admin: admin, trusted: trusted,
		client: &http.Client{Timeout: cfg.Timeout},
		log:    slog.Default(),
		now:    time.Now,
		good:   newLRU(cfg.CacheSize),
		none:   newLRU(cfg.CacheSize),
		calls:  make(map[[32]byte]*call),
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Config returns the checker's configuration.
func (c *Checker) Config() Config { return c.cfg }

// StepUpURL is aal2_url with refresh=true: the UI page where a signed-in member completes the second factor again
// (Kratos' login flow with refresh=true and aal=aal2).
func (c *Checker) StepUpURL() string {
	u, err := url.Parse(c.cfg.AAL2URL)
	if err != nil {
		return c.cfg.AAL2URL
	}
	q := u.Query()
	q.Set("refresh", "true")
	u.RawQuery = q.Encode()
	return u.String()
}

// SessionCookie returns the value of the request's Kratos session cookie, or "".
func (c *Checker) SessionCookie(r *http.Request) string {
	ck, err := r.Cookie(c.cfg.SessionCookie)
	if err != nil {
		return ""
	}
	return ck.Value
}

// ClientIP is the request's client address, believing X-Forwarded-For from the trusted proxies only.
func (c *Checker) ClientIP(r *http.Request) string {
	return ClientIP(r.RemoteAddr, r.Header.Get("X-Forwarded-For"), c.trusted)
}

// Check resolves the request's session cookie. Errors: ErrNoSession, *AAL2Error, ErrUnavailable.
func (c *Checker) Check(r *http.Request) (*Member, error) {
	m, err := c.CheckCookie(r.Context(), c.SessionCookie(r))
	if err != nil {
		return nil, err
	}
	m.ClientIP = c.ClientIP(r)
	return m, nil
}

// CheckCookie resolves a session cookie value to a copy of its Member (ClientIP empty).
func (c *Checker) CheckCookie(ctx context.Context, cookie string) (*Member, error) {
	if cookie == "" {
		return nil, ErrNoSession
	}
	key := sha256.Sum256([]byte(cookie))
	now := c.now()

	c.mu.Lock()
	if e, ok := c.good.get(key, now); ok {
		m := e.member
		c.mu.Unlock()
		m.VerifiedAddresses = slices.Clone(m.VerifiedAddresses)
		return &m, nil
	}
	if _, ok := c.none.get(key, now); ok {
		c.mu.Unlock()
		return nil, ErrNoSession
	}
	cl, inflight := c.calls[key]
	if !inflight {
		cl = &call{done: make(chan struct{})}
		c.calls[key] = cl
	}
	forgets := c.forgets
	c.mu.Unlock()

	if inflight {
		select {
		case <-cl.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
		}
	} else {
		// The lookup serves every waiter, so it does not end with the first caller's context.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.Timeout)
		cl.member, cl.err = c.lookup(lctx, cookie)
		cancel()
		c.mu.Lock()
		delete(c.calls, key)
		if c.forgets == forgets { // no Forget while asking: the answer is not older than a logout or login
			switch {
			case cl.err == nil:
				c.store(key, cl.member, now)
			case errors.Is(cl.err, ErrNoSession):
				c.storeNone(key, now)
			}
		}
		c.mu.Unlock()
		close(cl.done)
	}
	if cl.err != nil {
		return nil, cl.err
	}
	m := cl.member
	m.VerifiedAddresses = slices.Clone(m.VerifiedAddresses)
	return &m, nil
}

// Forget drops the cached answer of a session cookie value, a session or "no session" (on logout, and after a
// login, verification or settings submission). A lookup of any cookie in flight meanwhile does not cache its answer.
func (c *Checker) Forget(cookie string) {
	if cookie == "" {
		return
	}
	key := sha256.Sum256([]byte(cookie))
	c.mu.Lock()
	c.forgets++
	c.good.forget(key)
	c.none.forget(key)
	c.mu.Unlock()
}

// Cached is how many sessions the cache holds.
func (c *Checker) Cached() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.good.entries)
}

// CachedNoSession is how many cookies the cache holds a "no session" answer for.
func (c *Checker) CachedNoSession() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.none.entries)
}

// store caches m until the TTL passes or the session expires, whichever is first; c.mu is held.
func (c *Checker) store(key [32]byte, m Member, now time.Time) {
	expires := now.Add(c.cfg.CacheTTL)
	if !m.ExpiresAt.IsZero() && m.ExpiresAt.Before(expires) {
		expires = m.ExpiresAt
	}
	if !now.Before(expires) {
		return
	}
	c.none.forget(key)
	c.good.put(key, m, expires)
}

// storeNone caches a "no session" answer for NoSessionTTL, never longer than CacheTTL; c.mu is held.
func (c *Checker) storeNone(key [32]byte, now time.Time) {
	expires := now.Add(min(c.cfg.NoSessionTTL, c.cfg.CacheTTL))
	if !now.Before(expires) {
		return
	}
	c.good.forget(key)
	c.none.put(key, Member{}, expires)
}

// whoami is the part of Kratos' session answer the BFF reads.
type whoami struct {
	ID              string    `json:"id"`
	Active          bool      `json:"active"`
	ExpiresAt       time.Time `json:"expires_at"`
	AuthenticatedAt time.Time `json:"authenticated_at"`
	AAL             string    `json:"authenticator_assurance_level"`
	Identity        identity  `json:"identity"`
	// AuthenticationMethods lists every factor completed in the session, one entry per completion (a refresh
	// login appends one).
	AuthenticationMethods []struct {
		Method      string    `json:"method"`
		AAL         string    `json:"aal"`
		CompletedAt time.Time `json:"completed_at"`
	} `json:"authentication_methods"`
}

// secondFactors are the authentication methods that count as the second factor.
var secondFactors = map[string]bool{"totp": true, "lookup_secret": true}

type identity struct {
	ID     string `json:"id"`
	Traits struct {
		Email        string `json:"email"`
		Phone        string `json:"phone"`
		Nickname     string `json:"nickname"`
		Locale       string `json:"locale"`
		ReferralCode string `json:"referral_code"`
	} `json:"traits"`
	VerifiableAddresses []struct {
		Value    string `json:"value"`
		Verified bool   `json:"verified"`
		Via      string `json:"via"`
	} `json:"verifiable_addresses"`
	Credentials map[string]json.RawMessage `json:"credentials"`
}

type kratosError struct {
	Error struct {
		ID      string `json:"id"`
		Code    int    `json:"code"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"error"`
	RedirectBrowserTo string `json:"redirect_browser_to"`
}

// lookup asks Kratos about one session cookie.
func (c *Checker) lookup(ctx context.Context, cookie string) (Member, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.public.String()+"/sessions/whoami", nil)
	if err != nil {
		return Member{}, fmt.Errorf("whoami request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	// Only the session cookie leaves the BFF, never the request's other cookies.
	req.AddCookie(&http.Cookie{Name: c.cfg.SessionCookie, Value: cookie})
	resp, err := c.client.Do(req)
	if err != nil {
		c.log.Warn("auth: kratos whoami failed", "err", err)
		return Member{}, fmt.Errorf("%w: whoami: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Member{}, fmt.Errorf("%w: read whoami: %w", ErrUnavailable, err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusUnauthorized:
		return Member{}, ErrNoSession
	case resp.StatusCode == http.StatusForbidden:
		var ke kratosError
		_ = json.Unmarshal(body, &ke)
		if ke.Error.ID == "session_aal2_required" {
			return Member{}, &AAL2Error{RedirectTo: c.cfg.AAL2URL}
		}
		return Member{}, ErrNoSession
	default:
		c.log.Warn("auth: kratos whoami answered", "status", resp.StatusCode)
		return Member{}, fmt.Errorf("%w: whoami status %d", ErrUnavailable, resp.StatusCode)
	}
	var s whoami
	if err := json.Unmarshal(body, &s); err != nil {
		return Member{}, fmt.Errorf("%w: decode whoami: %w", ErrUnavailable, err)
	}
	if !s.Active || s.Identity.ID == "" {
		return Member{}, ErrNoSession
	}
	creds := s.Identity.Credentials
	if creds == nil {
		// whoami leaves the credentials out; the admin API lists the identity's credential types.
		if creds, err = c.credentials(ctx, s.Identity.ID); err != nil {
			return Member{}, err
		}
	}
	return memberOf(s, creds), nil
}

// credentials reads the identity's credential types from the admin API (without include_credential, so no
// secret such as the TOTP URL leaves Kratos).
func (c *Checker) credentials(ctx context.Context, id string) (map[string]json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		c.admin.String()+"/admin/identities/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, fmt.Errorf("identity request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		c.log.Warn("auth: kratos admin identity failed", "err", err)
		return nil, fmt.Errorf("%w: identity: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: identity status %d", ErrUnavailable, resp.StatusCode)
	}
	var ident identity
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ident); err != nil {
		return nil, fmt.Errorf("%w: decode identity: %w", ErrUnavailable, err)
	}
	if ident.Credentials == nil {
		ident.Credentials = map[string]json.RawMessage{}
	}
	return ident.Credentials, nil
}

func memberOf(s whoami, creds map[string]json.RawMessage) Member {
	t := s.Identity.Traits
	m := Member{
		ID: s.Identity.ID, Email: t.Email, Phone: t.Phone, Nickname: t.Nickname, Locale: t.Locale,
		ReferralCode: t.ReferralCode, AAL: s.AAL, SessionID: s.ID, ExpiresAt: s.ExpiresAt,
		AuthenticatedAt: s.AuthenticatedAt,
	}
	for _, am := range s.AuthenticationMethods {
		if secondFactors[am.Method] && am.CompletedAt.After(m.SecondFactorAt) {
			m.SecondFactorAt = am.CompletedAt
		}
	}
	for _, a := range s.Identity.VerifiableAddresses {
		if !a.Verified {
			continue
		}
		m.VerifiedAddresses = append(m.VerifiedAddresses, a.Value)
		if t.Email != "" && strings.EqualFold(a.Value, t.Email) {
			m.EmailVerified = true
		}
		if t.Phone != "" && a.Value == t.Phone {
			m.PhoneVerified = true
		}
	}
	_, m.TOTP = creds["totp"]
	_, m.LookupSecret = creds["lookup_secret"]
	return m
}
