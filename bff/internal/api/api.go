// Package api is the BFF's HTTP surface: the huma REST API under /api/v1 (OpenAPI 3.1 at /api/openapi.json, an
// offline docs page at /api/docs, RFC 9457 problem+json errors everywhere under /api), plus /healthz, /readyz and
// /metrics, wrapped in request-id, logging, metrics and Cache-Control middleware.
package api

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/api/trade"
	"github.com/exhub/exhub/bff/internal/api/wallet"
	"github.com/exhub/exhub/bff/internal/trading"
	walletsvc "github.com/exhub/exhub/bff/internal/wallet"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/exhub/exhub/bff/internal/api/account"
	analyticsapi "github.com/exhub/exhub/bff/internal/api/analytics"
	"github.com/exhub/exhub/bff/internal/api/apiutil"
	contentapi "github.com/exhub/exhub/bff/internal/api/content"
	historyapi "github.com/exhub/exhub/bff/internal/api/history"
	homeapi "github.com/exhub/exhub/bff/internal/api/home"
	marketapi "github.com/exhub/exhub/bff/internal/api/market"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/kyc"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/member"
	"github.com/exhub/exhub/bff/internal/metrics"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/servicegate"
)

func init() {
	// Lists in responses are always arrays (possibly empty), never null: the typed UI client relies on it.
	huma.DefaultArrayNullable = false
}

// Deps is what the API needs. Host, Cache and Metrics may be nil (e.g. to print the OpenAPI document).
type Deps struct {
	Config  *config.Config
	Host    *pluginhost.Host
	Cache   cache.Cache
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	Version string
	// Checks replace the default readiness checks of external services (tests); nil uses the defaults.
	Checks []Check
	// Market serves the market routes; nil builds one over Host and Cache (without the background ticker refresh
	// that Market.Run does).
	Market *market.Service
	// Stream, when set, is mounted at GET /api/v1/stream: the browser's live market WebSocket. It is not a JSON
	// route, so it is not part of the OpenAPI document; its protocol is documented with the stream gateway.
	Stream http.Handler
	// Analytics serves /api/v1/analytics/*; nil answers 503 there.
	Analytics Analytics
	// Auth checks sessions for the private routes (account, ...); nil builds one from Config's auth section (it
	// calls Kratos only when a private route is asked).
	Auth *auth.Checker
	// Gate, when set, serves the browser's Kratos self-service submissions (/.ory/self-service/*, sent by the edge).
	Gate http.Handler
	// Members and KYC serve the account routes' member data (nil: GET /api/v1/me from the session alone, the other
	// account routes 503). Members also serves Kratos' web hooks at member.HookPathPrefix.
	Members *member.Service
	KYC     *kyc.Service
	// Accounts serves /api/v1/accounts, the members' exchange accounts (nil: those routes answer 503).
	Accounts *accounts.Service
	// Trading serves the trading routes (/api/v1/orders, positions, leverage, ...; nil: they answer 503).
	Trading *trading.Service
	// Wallet serves the money movements (/api/v1/wallet/transfers, withdrawals, ..., movements; nil: they answer 503).
	Wallet *walletsvc.Service
	// Content serves the public content routes (/api/v1/content/*: events, banners, announcements; nil: 503).
	Content contentapi.Store
}

// Analytics is what the analytics routes need (analyticsapi.Analytics); *service.Service implements it.
type Analytics = analyticsapi.Analytics

type server struct {
	cfg       *config.Config
	host      *pluginhost.Host
	cache     cache.Cache
	metrics   *metrics.Metrics
	log       *slog.Logger
	checks    []Check
	market    *market.Service
	analytics Analytics
	mux       *http.ServeMux
}

// New builds the handler and the huma API (for the OpenAPI document).
func New(d Deps) (http.Handler, huma.API) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Version == "" {
		d.Version = "dev"
	}
	s := &server{cfg: d.Config, host: d.Host, cache: d.Cache, metrics: d.Metrics, log: d.Logger, mux: http.NewServeMux()}
	s.checks = d.Checks
	if s.checks == nil {
		s.checks = defaultChecks(d.Config, d.Cache)
	}
	s.market = d.Market
	if s.market == nil {
		s.market = market.New(market.Options{Exchanges: MarketExchanges(d.Config, d.Host), Cache: d.Cache, Logger: d.Logger})
	}
	api := humago.New(s.mux, apiConfig(d.Version))
	md := marketapi.Deps{Market: s.market, Host: d.Host, Analytics: d.Analytics, Logger: d.Logger}
	if d.Config != nil {
		md.Exchanges, md.ExchangesMaxAge = d.Config.Exchanges, d.Config.HTTP.ExchangesMaxAge.D()
	}
	marketapi.Register(api, md)
	s.analytics = d.Analytics
	analyticsapi.Register(api, analyticsapi.Deps{Analytics: d.Analytics, Exchanges: exchangeSlugs(d.Config), Logger: d.Logger})
	contentapi.Register(api, contentapi.Deps{Store: d.Content, Logger: d.Logger})
	if d.Auth == nil && d.Config != nil {
		if c, err := auth.NewChecker(d.Config.AuthConfig(), auth.WithLogger(d.Logger)); err == nil {
			d.Auth = c
		} else {
			d.Logger.Error("private routes left out: the auth section is invalid", "err", err)
		}
	}
	if d.Auth != nil {
		trade.Register(api, trade.Deps{Guard: d.Auth, Trading: d.Trading, Logger: d.Logger, Gates: serviceGates(d)})
		historyapi.Register(api, historyapi.Deps{Guard: d.Auth, Trading: d.Trading, Prices: s.market, Logger: d.Logger})
		account.Register(api, account.Deps{Auth: d.Auth, Members: d.Members, KYC: d.KYC, Accounts: d.Accounts, Logger: d.Logger,
			Exchanges: exchangeSlugs(d.Config)})
		wallet.Register(api, walletDeps(d, s.market))
		homeapi.Register(api, homeapi.Deps{Guard: d.Auth, Wallet: walletDeps(d, s.market), Trading: d.Trading, Logger: d.Logger})
	}
	if d.Members != nil {
		s.mux.Handle(member.HookPathPrefix, d.Members.Hooks())
	}
	if d.Gate != nil {
		s.mux.Handle("/.ory/self-service/", d.Gate)
	}

	if d.Stream != nil {
		s.mux.Handle("GET /api/v1/stream", d.Stream)
	}
	s.mux.HandleFunc("GET /api/docs", s.docsPage)
	s.mux.HandleFunc("GET /api/docs/assets/{file}", s.docsAsset)
	s.mux.HandleFunc("/api/", s.notFound)
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	if d.Metrics != nil {
		s.mux.Handle("GET /metrics", d.Metrics.Handler())
	}
	return s.middleware(s.mux), api
}

// exchangeSlugs are the configured exchanges' slugs (the KYC answer's per-exchange flags).
func exchangeSlugs(cfg *config.Config) []string {
	if cfg == nil {
		return nil
	}
	out := make([]string, 0, len(cfg.Exchanges))
	for _, e := range cfg.Exchanges {
		out = append(out, e.Slug)
	}
	return out
}

// MarketExchanges lists the configured exchanges for the market service, each with its plugin supervisor when it
// has one.
func MarketExchanges(cfg *config.Config, host *pluginhost.Host) []market.Exchange {
	if cfg == nil {
		return nil
	}
	out := make([]market.Exchange, 0, len(cfg.Exchanges))
	for _, e := range cfg.Exchanges {
		me := market.Exchange{Key: e.Key, Slug: e.Slug, Status: e.Status}
		if e.Plugin != "" && host != nil {
			if sup, ok := host.Get(e.Slug); ok {
				me.Plugin = sup
			}
		}
		out = append(out, me)
	}
	return out
}

// Config is the huma configuration of the exhub API.
func apiConfig(version string) huma.Config {
	cfg := huma.DefaultConfig("exhub API", version)
	cfg.Info.Description = "The exhub backend-for-frontend: exchanges, market data, trading, wallet and analytics " +
		"across every connected exchange. Errors are RFC 9457 problem details (application/problem+json)."
	cfg.OpenAPIPath = "/api/openapi"
	cfg.SchemasPath = "/api/schemas"
	// The default docs page loads its script from a CDN; /api/docs serves a bundle from disk instead.
	cfg.DocsPath = ""
	// Keep bodies exactly as documented: no $schema field or Link header.
	cfg.CreateHooks = nil
	return cfg
}

// OpenAPI returns the API's OpenAPI 3.1 document as JSON, without starting anything (the session checker it
// builds for the private routes calls nothing until a request comes).
func OpenAPI(cfg *config.Config, version string) ([]byte, error) {
	checker, err := auth.NewChecker(cfg.AuthConfig())
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	_, api := New(Deps{Config: cfg, Version: version, Checks: []Check{}, Auth: checker})
	b, err := json.MarshalIndent(api.OpenAPI(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	return b, nil
}

// problem writes an RFC 9457 problem document.
func problem(w http.ResponseWriter, status int, detail string) { apiutil.Problem(w, status, detail) }

// notFound answers every /api path no route matched: 405 when the path exists for another method, else 404.
func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/api/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		problem(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	problem(w, http.StatusNotFound, fmt.Sprintf("no API route %s %s", r.Method, r.URL.Path))
}

func (s *server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// --- middleware -------------------------------------------------------------------------------------------------

type ctxKey struct{}

// RequestID returns the request id the middleware assigned ("" outside a request).
func RequestID(r *http.Request) string {
	id, _ := r.Context().Value(ctxKey{}).(string)
	return id
}

var requestIDRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type recorder struct {
	http.ResponseWriter
	status  int
	bytes   int
	path    string
	written bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.written {
		r.written = true
		r.status = code
		h := r.Header()
		if h.Get("Cache-Control") == "" {
			// Anything not marked public depends on who asks (or is an error): never cache it.
			if strings.HasPrefix(r.path, "/api/") {
				h.Set("Cache-Control", "private, no-store")
			} else {
				h.Set("Cache-Control", "no-store")
			}
		}
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.written {
		r.WriteHeader(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (WebSocket upgrades, deadlines).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack hands the connection to a WebSocket library that asserts http.Hijacker directly. A hijacked response
// counts as 101 Switching Protocols in logs and metrics.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err == nil && !r.written {
		r.written = true
		r.status = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}

func (s *server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !requestIDRe.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(contextWithID(r, id))
		rec := &recorder{ResponseWriter: w, status: http.StatusOK, path: r.URL.Path}
		next.ServeHTTP(rec, r)
		if !rec.written {
			rec.WriteHeader(http.StatusOK)
		}
		d := time.Since(start)
		route := r.Pattern
		if route == "" || route == "/api/" {
			route = "unmatched"
		}
		if s.metrics != nil {
			s.metrics.ObserveHTTP(route, r.Method, rec.status, d)
		}
		level := slog.LevelInfo
		switch {
		case rec.status >= 500:
			level = slog.LevelError
		case route == "GET /healthz" || route == "GET /readyz" || route == "GET /metrics":
			level = slog.LevelDebug
		}
		s.log.LogAttrs(r.Context(), level, "http request",
			slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("route", route), slog.Int("status", rec.status), slog.Int("bytes", rec.bytes),
			slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.String("remote", r.RemoteAddr))
	})
}

// serviceGates are the exchanges' gated services (exchanges[].gates) over the members' per-exchange KYC flags.
func serviceGates(d Deps) *servicegate.Checker {
	if d.Config == nil {
		return nil
	}
	rules, names := config.GateRules(d.Config.Exchanges)
	var kyc servicegate.KYCSource // nil: a KYC gate refuses
	if d.Members != nil {
		if st := d.Members.Store(); st != nil {
			kyc = st
		}
	}
	return servicegate.New(rules, names, kyc)
}
