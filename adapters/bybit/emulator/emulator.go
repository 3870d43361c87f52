// Package emulator serves Bybit's v5 public market data dialect from the simulated venue (adapters/venue, profile
// "bybit"): the same paths, parameters, field names, string-typed numbers, the retCode/retMsg/result/time
// envelope, nextPageCursor paging, the IP rate limit, and the public WebSockets per category (/v5/public/spot and
// /v5/public/linear), so the Bybit adapter runs its real code against it. Private endpoints (signature checks,
// trading, wallet, broker) are the next part. See README.md.
package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/plugin-sdk/faults"
)

// Config sets up a Server.
type Config struct {
	// Venue is required; it should use the "bybit" profile (sizes in base units, as Bybit's spot and linear).
	Venue  *venue.Venue
	Logger *slog.Logger
	// IdleTimeout closes a WebSocket connection after this long without a frame from the client; default 60 s.
	IdleTimeout time.Duration
	// DisableRateLimits turns off the IP limit (600 requests per 5 s) and the per-UID limits of the private
	// endpoints (their X-Bapi-Limit headers are still sent).
	DisableRateLimits bool
	// Credentials adds API keys besides the demo key (DemoAPIKey).
	Credentials []Credentials
	// NoDemoFunding skips funding the demo account from the faucet (it is still created).
	NoDemoFunding bool
}

// Server is a Bybit v5 emulator over one venue.
type Server struct {
	cfg    Config
	v      *venue.Venue
	log    *slog.Logger
	mux    *http.ServeMux
	ctx    context.Context
	cancel context.CancelFunc

	spot   map[string]*inst // by symbol
	linear map[string]*inst
	order  []*inst // spot first, then linear, in venue order

	faults *faults.Injector
	limits *limiter
	uid    *uidLimit
	keys   *keyring

	unitsMu sync.Mutex
	units   map[uint64]string // spot market orders sized in the quote coin

	tpslMu sync.Mutex
	tpsls  map[string]tpsl // trading-stop per account, symbol and positionIdx

	mu     sync.Mutex
	conns  map[*wsConn]struct{}
	nextID uint64
}

// New builds a server over the venue's instruments.
func New(cfg Config) (*Server, error) {
	if cfg.Venue == nil {
		return nil, errors.New("bybit emulator: Config.Venue is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 60 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, v: cfg.Venue, log: cfg.Logger.With("component", "bybit-emulator"), ctx: ctx, cancel: cancel,
		spot: map[string]*inst{}, linear: map[string]*inst{}, faults: &faults.Injector{},
		limits: newLimiter(!cfg.DisableRateLimits), conns: map[*wsConn]struct{}{},
		uid: &uidLimit{counts: map[string]int{}}, keys: &keyring{keys: map[string]Credentials{}},
		units: map[uint64]string{}, tpsls: map[string]tpsl{}}
	for _, in := range s.v.Instruments() {
		i := newInst(in)
		if i.linear {
			s.linear[i.symbol] = i
		} else {
			s.spot[i.symbol] = i
		}
		s.order = append(s.order, i)
	}
	if err := s.setupKeys(); err != nil {
		cancel()
		return nil, err
	}
	s.routes()
	return s, nil
}

// Faults is the fault injector behind faults.Path: tests arm a lost answer for one orderLinkId.
func (s *Server) Faults() *faults.Injector { return s.faults }

// Handler serves REST and the WebSocket endpoints.
func (s *Server) Handler() http.Handler { return s.mux }

// Close drops every WebSocket connection. The venue is not closed.
func (s *Server) Close() {
	s.cancel()
	s.DropConnections()
}

// PluginSettings returns the Bybit plugin's Configure settings pointing it at an emulator served at baseURL
// (e.g. "http://127.0.0.1:7003").
func PluginSettings(baseURL string) map[string]string {
	base := strings.TrimRight(baseURL, "/")
	ws := "ws" + strings.TrimPrefix(base, "http")
	return map[string]string{
		"rest_url":      base,
		"ws_spot_url":   ws + "/v5/public/spot",
		"ws_linear_url": ws + "/v5/public/linear",
	}
}

// obj is a JSON object of the wire.
type obj = map[string]any

// apiError is a Bybit error: retCode and retMsg (HTTP 200, as Bybit answers them).
type apiError struct {
	code int
	msg  string
}

func errParams(msg string) *apiError { return &apiError{10001, "params error: " + msg} }

func errSymbol() *apiError { return &apiError{10001, "params error: symbol invalid"} }

func errInternal(err error) *apiError {
	if errors.Is(err, venue.ErrInstrument) {
		return errSymbol()
	}
	return &apiError{10016, "Internal server error: " + err.Error()}
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// envelope is Bybit's response body.
func (s *Server) envelope(code int, msg string, result any) obj {
	if result == nil {
		result = obj{}
	}
	return obj{"retCode": code, "retMsg": msg, "result": result, "retExtInfo": obj{}, "time": s.v.Now()}
}

type handler func(q *request) (any, *apiError)

type request struct {
	r *http.Request
}

func (q *request) get(name string) string { return strings.TrimSpace(q.r.URL.Query().Get(name)) }

// route registers a public GET endpoint behind the IP limit.
func (s *Server) route(path string, h handler) {
	s.mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
		if !s.limits.allow(clientIP(r), s.limits.now()) {
			// Bybit answers an IP over its limit with HTTP 403 and no envelope.
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("access too frequent"))
			return
		}
		res, aerr := h(&request{r: r})
		if aerr != nil {
			s.writeJSON(w, http.StatusOK, s.envelope(aerr.code, aerr.msg, obj{}))
			return
		}
		s.writeJSON(w, http.StatusOK, s.envelope(0, "OK", res))
	})
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.route("/v5/market/instruments-info", s.instruments)
	s.route("/v5/market/tickers", s.tickers)
	s.route("/v5/market/orderbook", s.orderbook)
	s.route("/v5/market/kline", s.kline)
	s.route("/v5/market/recent-trade", s.recentTrade)
	s.route("/v5/market/time", s.serverTime)
	s.route("/v5/market/funding/history", s.fundingHistory)
	s.route("/v5/market/open-interest", s.openInterest)
	s.route("/v5/market/account-ratio", s.accountRatio)
	s.mux.Handle(faults.Path, s.faults)
	s.privateRoutes()
	s.wsRoutes()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeJSON(w, http.StatusNotFound, s.envelope(10001, "Not Found: "+r.URL.Path, obj{}))
	})
}

// limiter counts requests per IP in fixed 5 s windows: Bybit's 600 requests per 5 s over all of its REST API.
type limiter struct {
	on     bool
	now    func() time.Time // the clock of the windows (tests fix it)
	mu     sync.Mutex
	window int64
	counts map[string]int
}

const (
	ipLimit     = 600
	limitWindow = 5 * time.Second
)

func newLimiter(on bool) *limiter { return &limiter{on: on, now: time.Now, counts: map[string]int{}} }

func (l *limiter) allow(key string, now time.Time) bool {
	if !l.on {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	w := now.UnixNano() / int64(limitWindow)
	if w != l.window {
		l.window = w
		clear(l.counts)
	}
	l.counts[key]++
	return l.counts[key] <= ipLimit
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// dec renders a decimal the way Bybit does: plain digits, no exponent.
func dec(d decimal.Decimal) string { return d.String() }

func ms(t int64) string { return strconv.FormatInt(t, 10) }
