// Package gate is the BFF's self-service gate: the edge sends the browser's Kratos self-service calls
// (/.ory/self-service/*) here, and the gate enforces the spec's password policy, rate limits login, registration,
// recovery and verification per identifier and per client IP, proxies everything else to Kratos unchanged, turns
// the session cookie persistent only when the member asked to stay signed in, and forgets cached sessions on logout.
package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/ratelimit"
)

// Deps are the gate's collaborators.
type Deps struct {
	// Limiter counts attempts (ratelimit.Valkey in production, ratelimit.Local in tests).
	Limiter ratelimit.Limiter
	// Forget drops a session cookie's cached whoami answer on logout (auth.Checker.Forget); nil skips it.
	Forget func(sessionCookie string)
	Logger *slog.Logger
	// Now is the clock of cookie expiry; nil is time.Now.
	Now func() time.Time
}

// Gate is an http.Handler for the self-service prefix.
type Gate struct {
	cfg     Config
	deps    Deps
	target  *url.URL
	trusted []netip.Prefix
	proxy   *httputil.ReverseProxy
}

// New validates cfg and returns the gate.
func New(cfg Config, deps Deps) (*Gate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Limiter == nil {
		return nil, errors.New("gate: nil limiter")
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	target, _ := url.Parse(strings.TrimSuffix(cfg.KratosPublicURL, "/"))
	trusted, _ := auth.ParsePrefixes(cfg.TrustedProxies)
	g := &Gate{cfg: cfg, deps: deps, target: target, trusted: trusted}
	g.proxy = &httputil.ReverseProxy{
		Rewrite:        g.rewrite,
		ModifyResponse: g.modifyResponse,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			g.deps.Logger.Warn("gate: kratos unreachable", "path", r.URL.Path, "err", err)
			auth.WriteProblem(w, unavailable())
		},
	}
	return g, nil
}

func unavailable() *auth.Problem {
	return &auth.Problem{Type: "about:blank", Title: http.StatusText(http.StatusServiceUnavailable),
		Status: http.StatusServiceUnavailable, Code: auth.CodeUnavailable,
		Detail: "the identity service is unavailable; try again shortly"}
}

// flowKind is the self-service flow a path belongs to: login, registration, recovery, verification, settings,
// logout, or "".
func flowKind(path string) string {
	rest, ok := strings.CutPrefix(path, "/self-service/")
	if !ok {
		return ""
	}
	kind, _, _ := strings.Cut(rest, "/")
	return kind
}

// kratosPath is the request path as Kratos knows it (without the edge's prefix).
func (g *Gate) kratosPath(r *http.Request) string {
	return strings.TrimPrefix(r.URL.Path, g.cfg.Prefix)
}

// knownFlows are the self-service flows the gate forwards.
var knownFlows = map[string]bool{
	"login": true, "registration": true, "recovery": true, "verification": true, "settings": true, "logout": true,
}

// submitFlows are the flows whose POST submissions the gate inspects.
var submitFlows = map[string]bool{
	"login": true, "registration": true, "recovery": true, "verification": true, "settings": true,
}

// ServeHTTP inspects submissions and proxies to Kratos. Paths it does not know, or spelled otherwise than clean
// (the edge matches cleaned, case-folded paths), are refused instead of forwarded.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := g.kratosPath(r)
	kind := flowKind(p)
	if !strings.HasPrefix(r.URL.Path, g.cfg.Prefix+"/") || path.Clean(p) != p || !knownFlows[kind] {
		auth.WriteProblem(w, problem(http.StatusNotFound, "not_found", "no such self-service path"))
		return
	}
	submitPath := p == "/self-service/"+kind
	switch {
	case r.Method == http.MethodPost && submitFlows[kind]:
		sub, prob := g.inspect(r, kind)
		if prob != nil {
			auth.WriteProblem(w, prob)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), submissionKey{}, sub))
	case r.Method == http.MethodGet && submitPath && kind == "settings" && r.URL.Query().Has("method"):
		// Kratos' settings strategies also decode GET query parameters: a submission by GET would pass the
		// password policy by. The UI never sends one.
		auth.WriteProblem(w, problem(http.StatusMethodNotAllowed, "method_not_allowed", "settings are submitted by POST"))
		return
	}
	g.proxy.ServeHTTP(w, r)
}

type submissionKey struct{}

// submission holds the fields of a flow submission the gate reads.
type submission struct {
	method, password, identifier, code, address, traitEmail, traitPhone string
}

// inspect reads the submission (bounded), applies the password policy and the rate limits, and puts the body back
// for the proxy. A non-nil problem is the answer.
func (g *Gate) inspect(r *http.Request, kind string) (submission, *auth.Problem) {
	body, err := io.ReadAll(io.LimitReader(r.Body, g.cfg.MaxBody+1))
	_ = r.Body.Close()
	if err != nil {
		return submission{}, problem(http.StatusBadRequest, "bad_request", "could not read the request body")
	}
	if int64(len(body)) > g.cfg.MaxBody {
		return submission{}, problem(http.StatusRequestEntityTooLarge, auth.CodeBodyTooLarge, "the submission is too large")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))

	s, err := parse(r.Header.Get("Content-Type"), body)
	if err != nil {
		return s, problem(http.StatusUnsupportedMediaType, "unsupported_body", err.Error())
	}
	if (kind == "registration" || kind == "settings") && s.method == "password" {
		if broken := BrokenRules(s.password); len(broken) > 0 {
			p := problem(http.StatusUnprocessableEntity, auth.CodeWeakPassword, "the password does not meet the policy")
			for _, rule := range broken {
				p.Errors = append(p.Errors, &huma.ErrorDetail{Location: "body.password", Value: rule, Message: RuleMessages[rule]})
			}
			return s, p
		}
	}
	return s, g.limit(r, kind, s)
}

func problem(status int, code, detail string) *auth.Problem {
	return &auth.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Code: code, Detail: detail}
}

// parse reads a JSON or form submission.
func parse(contentType string, body []byte) (submission, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	get := func(string) string { return "" }
	switch {
	case len(body) == 0:
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return submission{}, fmt.Errorf("the JSON body does not parse: %w", err)
		}
		get = func(key string) string {
			if v, ok := m[key].(string); ok {
				return v
			}
			// Nested traits ({"traits":{"email":...}}) as well as dotted keys.
			if head, tail, ok := strings.Cut(key, "."); ok {
				if sub, ok := m[head].(map[string]any); ok {
					v, _ := sub[tail].(string)
					return v
				}
			}
			return ""
		}
	case mt == "application/x-www-form-urlencoded":
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return submission{}, fmt.Errorf("the form body does not parse: %w", err)
		}
		get = vals.Get
	default:
		return submission{}, fmt.Errorf("submissions must be JSON or form encoded, not %q", mt)
	}
	return submission{
		method: get("method"), password: get("password"), identifier: get("identifier"), code: get("code"),
		address: firstOf(get("email"), get("phone")), traitEmail: get("traits.email"), traitPhone: get("traits.phone"),
	}, nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// normalize makes one identifier of the ways a member may type it: trimmed, lower case, and for phone numbers
// without spaces, dashes, dots and parentheses.
func normalize(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if strings.HasPrefix(id, "+") || (id != "" && !strings.Contains(id, "@")) {
		id = strings.Map(func(r rune) rune {
			switch r {
			case ' ', '-', '.', '(', ')':
				return -1
			}
			return r
		}, id)
	}
	return id
}

type check struct {
	name, key string
	limit     ratelimit.Limit
}

// limit counts the attempt under every limit of its kind and refuses it when any is exceeded.
func (g *Gate) limit(r *http.Request, kind string, s submission) *auth.Problem {
	ip := auth.ClientIP(r.RemoteAddr, r.Header.Get("X-Forwarded-For"), g.trusted)
	l := g.cfg.Limits
	var checks []check
	add := func(name string, lim ratelimit.Limit, id string) {
		if id != "" {
			checks = append(checks, check{name, ratelimit.HashKey(name, id), lim})
		}
	}
	switch kind {
	case "login":
		add("login_ip", l.LoginIP, ip)
		id := normalize(s.identifier)
		if id == "" {
			// The second factor: counted per session.
			if c, err := r.Cookie(g.cfg.SessionCookie); err == nil {
				id = "session:" + c.Value
			}
		}
		add("login_id", l.LoginIdentifier, id)
	case "registration":
		add("registration_ip", l.RegistrationIP, ip)
		add("registration_id", l.RegistrationIdentifier, normalize(firstOf(s.traitEmail, s.traitPhone)))
	case "recovery", "verification":
		if s.code != "" {
			add("code_check_ip", l.CodeCheckIP, ip)
			add("code_check_flow", l.CodeCheckFlow, r.URL.Query().Get("flow"))
		} else {
			add("code_send_ip", l.CodeSendIP, ip)
			add("code_send_id", l.CodeSendIdentifier, normalize(s.address))
		}
	}
	var wait time.Duration
	refused := false
	for _, c := range checks {
		res, err := g.deps.Limiter.Allow(r.Context(), c.key, c.limit)
		if err != nil {
			g.deps.Logger.Warn("gate: rate limit failed", "limit", c.name, "err", err)
			return unavailable()
		}
		if !res.Allowed {
			refused = true
			wait = max(wait, res.RetryAfter)
			g.deps.Logger.Info("gate: rate limited", "limit", c.name, "flow", kind, "retry_after", res.RetryAfter)
		}
	}
	if refused {
		return auth.RateLimited(wait)
	}
	return nil
}

// rewrite sends the request on to Kratos without the prefix, keeping the host, headers and cookies, with
// X-Forwarded-For believed only from trusted proxies.
func (g *Gate) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Path = g.kratosPath(pr.In)
	pr.Out.URL.RawPath = ""
	pr.SetURL(g.target)
	pr.Out.Host = pr.In.Host
	peer := auth.ClientIP(pr.In.RemoteAddr, "", nil)
	if isTrusted(peer, g.trusted) {
		if prior := pr.In.Header.Get("X-Forwarded-For"); prior != "" {
			pr.Out.Header.Set("X-Forwarded-For", prior+", "+peer)
		} else {
			pr.Out.Header.Set("X-Forwarded-For", peer)
		}
		for _, h := range []string{"X-Forwarded-Host", "X-Forwarded-Proto"} {
			if v := pr.In.Header.Get(h); v != "" {
				pr.Out.Header.Set(h, v)
			}
		}
		return
	}
	pr.SetXForwarded()
}

func isTrusted(ip string, trusted []netip.Prefix) bool {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// modifyResponse applies the stay-signed-in choice to the session cookie and clears state on logout.
func (g *Gate) modifyResponse(resp *http.Response) error {
	r := resp.Request
	kind := flowKind(g.kratosPath(r))
	now := g.deps.Now()
	if kind == "logout" && resp.StatusCode < 400 {
		if c, err := r.Cookie(g.cfg.SessionCookie); err == nil && g.deps.Forget != nil {
			g.deps.Forget(c.Value)
		}
		for _, name := range []string{g.cfg.RememberCookie, g.cfg.CSRFCookie} {
			resp.Header.Add("Set-Cookie", (&http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1,
				Expires: time.Unix(0, 0), Secure: g.cfg.CookieSecure}).String())
		}
		return nil
	}

	// A submission that went through may change what whoami says of this session (a verified address, new
	// traits, a second factor raising the session to aal2): the next check asks Kratos again instead of the cache.
	if r.Method == http.MethodPost && resp.StatusCode < 400 && (kind == "verification" || kind == "settings" || kind == "login") {
		if c, err := r.Cookie(g.cfg.SessionCookie); err == nil && g.deps.Forget != nil {
			g.deps.Forget(c.Value)
		}
	}

	// The first factor of a login decides by its header; everything else keeps the recorded choice.
	sub, _ := r.Context().Value(submissionKey{}).(submission)
	firstFactor := kind == "login" && r.Method == http.MethodPost && sub.identifier != ""
	var remember bool
	if firstFactor {
		remember = r.Header.Get(g.cfg.RememberHeader) == "1"
	} else if c, err := r.Cookie(g.cfg.RememberCookie); err == nil && c.Value == "1" {
		remember = true
	}
	setCookies := resp.Header.Values("Set-Cookie")
	if len(setCookies) == 0 {
		return nil
	}
	out := make([]string, 0, len(setCookies)+1)
	sessionSet := false
	for _, line := range setCookies {
		c, err := http.ParseSetCookie(line)
		if err != nil || c.Name != g.cfg.SessionCookie || c.MaxAge < 0 || (!c.Expires.IsZero() && !c.Expires.After(now)) {
			out = append(out, line) // not the session cookie, or its deletion: unchanged
			continue
		}
		sessionSet = true
		if remember {
			c.MaxAge = int(g.cfg.SessionLifespan / time.Second)
			c.Expires = now.Add(g.cfg.SessionLifespan).UTC()
		} else {
			c.MaxAge, c.Expires = 0, time.Time{}
		}
		out = append(out, c.String())
	}
	if sessionSet && firstFactor {
		rc := &http.Cookie{Name: g.cfg.RememberCookie, Value: "1", Path: "/", HttpOnly: true,
			SameSite: http.SameSiteLaxMode, Secure: g.cfg.CookieSecure,
			MaxAge: int(g.cfg.SessionLifespan / time.Second), Expires: now.Add(g.cfg.SessionLifespan).UTC()}
		if !remember {
			rc.Value, rc.MaxAge, rc.Expires = "", -1, time.Unix(0, 0)
		}
		out = append(out, rc.String())
	}
	resp.Header["Set-Cookie"] = out
	return nil
}
