// Package emulator serves OKX's v5 REST and WebSocket dialect from the simulated venue (adapters/venue): the same
// paths, parameters, field names, string-typed numbers, envelopes, error codes, request signing, login, book
// checksums and rate limits, so the OKX adapter runs its real code against it. One listener carries REST and the
// three WebSocket endpoints (/ws/v5/public, /ws/v5/business, /ws/v5/private). See README.md.
package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/plugin-sdk/faults"
)

// Demo credentials of the paper account the emulator creates and funds from the venue faucet.
const (
	DemoAPIKey     = "okx-demo-key-7a1c2e94"
	DemoAPISecret  = "okx-demo-secret-3f6b0d58c2a94e17"
	DemoPassphrase = "exhub-demo-pass"
	// DemoAccount is the venue account id behind the demo key.
	DemoAccount = "okx-demo"
)

// Credentials is one API key of a venue account.
type Credentials struct {
	APIKey     string
	Secret     string
	Passphrase string
	// Account is the venue account id; it is created when missing.
	Account string
	// Perm is the key's permissions as GET /api/v5/account/config lists them, comma separated from "read_only",
	// "trade" and "withdraw"; empty means all three. Calls the key may not make answer 50120.
	Perm string
	// IPs binds the key to these addresses (account/config "ip"); empty means any address.
	IPs []string
	// Broker marks a master (broker) key: only such a key may call the broker endpoints (/api/v5/broker/nd/...)
	// and the master's sub-account transfers and balances. The demo key is one.
	Broker bool
}

// DefaultDemoReserve is what demo mode (exhub-emulators) deposits into the demo (broker master) account's trading
// account on top of its faucet funds, so the master can grant demo funds to thousands of sub-accounts.
func DefaultDemoReserve() map[string]decimal.Decimal {
	return map[string]decimal.Decimal{"USDT": decimal.NewFromInt(20_000_000), "BTC": decimal.NewFromInt(200),
		"ETH": decimal.NewFromInt(2_000)}
}

// perm is the key's permission list.
func (c Credentials) perm() string {
	if c.Perm == "" {
		return "read_only,trade,withdraw"
	}
	return c.Perm
}

// may reports whether the key holds a permission ("read_only", "trade" or "withdraw").
func (c Credentials) may(p string) bool {
	for _, x := range strings.Split(c.perm(), ",") {
		if strings.TrimSpace(x) == p {
			return true
		}
	}
	return false
}

// Config sets up a Server.
type Config struct {
	// Venue is required; it should use the "okx" profile (perpetuals sized in contracts).
	Venue  *venue.Venue
	Logger *slog.Logger
	// Credentials adds API keys besides the demo key.
	Credentials []Credentials
	// NoDemoFunding skips funding the demo account from the faucet (it is still created).
	NoDemoFunding bool
	// DemoReserve is deposited into the demo account's trading account for the sub-accounts' demo grants (demo
	// mode uses DefaultDemoReserve); nil: none.
	DemoReserve map[string]decimal.Decimal
	// IdleTimeout closes a WebSocket connection after this long without a frame either way; default 30 s as OKX.
	IdleTimeout time.Duration
	// DisableRateLimits turns off the per-endpoint request limits.
	DisableRateLimits bool
	// TimestampWindow is how far a signed request's timestamp may be from the venue clock; default 30 s.
	TimestampWindow time.Duration
	// MinCancelAllAfter is the shortest countdown trade/cancel-all-after takes (whole seconds); default 10 s as
	// OKX. Tests lower it to see the switch fire.
	MinCancelAllAfter time.Duration
}

// Server is an OKX v5 emulator over one venue.
type Server struct {
	cfg    Config
	v      *venue.Venue
	log    *slog.Logger
	mux    *http.ServeMux
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	insts   []*inst
	byID    map[string]*inst
	byVenue map[string]*inst

	keysMu  sync.RWMutex
	keys    map[string]Credentials // guarded by keysMu: sub-account keys are added at run time
	deadman *deadMan
	faults  *faults.Injector
	limits  *limiter
	sod     *sodCache

	mu       sync.Mutex
	conns    map[*wsConn]struct{}
	algos    *algoBook
	converts []obj // convert trade history, newest last, bounded
	bills    []obj // funding account bills (transfers with the trading account), newest last, bounded
	tags     map[uint64]string
	nextID   uint64
	// subLabels: a broker sub-account's OKX label (a note; its name is the venue label), by venue account id.
	subLabels map[string]string
	// wdClients: the clientId a withdrawal was sent with, by wdId (the newest maxWdClients; wdOrder oldest first).
	wdClients map[string]string
	wdOrder   []string
}

// New builds a server, creates the demo account (funded from the faucet unless NoDemoFunding) and the accounts of
// extra credentials, and starts the background watcher of algo orders. Close stops it.
func New(cfg Config) (*Server, error) {
	if cfg.Venue == nil {
		return nil, errors.New("okx emulator: Config.Venue is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Second
	}
	if cfg.TimestampWindow <= 0 {
		cfg.TimestampWindow = 30 * time.Second
	}
	if cfg.MinCancelAllAfter < time.Second {
		cfg.MinCancelAllAfter = 10 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, v: cfg.Venue, log: cfg.Logger.With("component", "okx-emulator"), ctx: ctx, cancel: cancel,
		byID: map[string]*inst{}, byVenue: map[string]*inst{}, keys: map[string]Credentials{},
		limits: newLimiter(!cfg.DisableRateLimits), sod: newSodCache(), conns: map[*wsConn]struct{}{},
		algos: newAlgoBook(), deadman: newDeadMan(), tags: map[uint64]string{}, faults: &faults.Injector{},
		subLabels: map[string]string{}}
	for _, in := range s.v.Instruments() {
		i := newInst(in)
		s.insts = append(s.insts, i)
		s.byID[i.id] = i
		s.byVenue[in.ID] = i
	}
	creds := append([]Credentials{{APIKey: DemoAPIKey, Secret: DemoAPISecret, Passphrase: DemoPassphrase,
		Account: DemoAccount, Broker: true}}, cfg.Credentials...)
	for _, c := range creds {
		if c.APIKey == "" || c.Secret == "" || c.Account == "" {
			cancel()
			return nil, fmt.Errorf("okx emulator: credentials need APIKey, Secret and Account")
		}
		fresh := s.v.CreateAccount(c.Account) == nil
		s.addKey(c)
		if fresh && c.APIKey == DemoAPIKey && !cfg.NoDemoFunding {
			if err := s.fundDemo(c.Account); err != nil {
				cancel()
				return nil, fmt.Errorf("okx emulator: fund demo account: %w", err)
			}
		}
	}
	s.routes()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.watchAlgos(ctx)
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.watchDeadMan(ctx)
	}()
	return s, nil
}

// addKey registers an API key.
func (s *Server) addKey(c Credentials) {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	s.keys[c.APIKey] = c
}

// credential looks an API key up.
func (s *Server) credential(key string) (Credentials, bool) {
	s.keysMu.RLock()
	defer s.keysMu.RUnlock()
	c, ok := s.keys[key]
	return c, ok
}

// fundDemo deposits faucet amounts into the funding account and moves part of them to the trading account.
func (s *Server) fundDemo(acct string) error {
	ctx := context.Background()
	for _, a := range []string{"USDT", "USDT", "BTC", "ETH"} {
		if _, ok := s.v.Assets()[a]; !ok {
			continue
		}
		if _, err := s.v.Deposit(ctx, acct, a, decimal.Zero); err != nil {
			return err
		}
	}
	for _, a := range []string{"USDT", "BTC", "ETH"} {
		bs, err := s.v.Balances(acct, venue.Funding)
		if err != nil {
			return err
		}
		for _, b := range bs {
			if b.Asset == a && b.Free.IsPositive() {
				amt := b.Free
				if a == "USDT" {
					amt = b.Free.Div(decimal.NewFromInt(2)).RoundFloor(8)
				}
				if _, err := s.v.Transfer(ctx, acct, a, amt, venue.Funding, venue.TradingWallet); err != nil {
					return err
				}
			}
		}
	}
	for a, amt := range s.cfg.DemoReserve {
		if _, ok := s.v.Assets()[a]; !ok || !amt.IsPositive() {
			continue
		}
		if _, err := s.v.Deposit(ctx, acct, a, amt); err != nil {
			return err
		}
		if _, err := s.v.Transfer(ctx, acct, a, amt, venue.Funding, venue.TradingWallet); err != nil {
			return err
		}
	}
	return nil
}

// Faults is the fault injector behind faults.Path: tests arm a lost answer for one client id.
func (s *Server) Faults() *faults.Injector { return s.faults }

// Handler serves REST and the WebSocket endpoints.
func (s *Server) Handler() http.Handler { return s.mux }

// Close drops every WebSocket connection and stops background work. The venue is not closed.
func (s *Server) Close() {
	s.cancel()
	s.DropConnections()
	s.wg.Wait()
}

// PluginSettings returns the OKX plugin's Configure settings pointing it at an emulator served at baseURL
// (e.g. "http://127.0.0.1:7002").
func PluginSettings(baseURL string) map[string]string {
	base := strings.TrimRight(baseURL, "/")
	ws := "ws" + strings.TrimPrefix(base, "http")
	return map[string]string{
		"rest_url":        base,
		"ws_public_url":   ws + "/ws/v5/public",
		"ws_private_url":  ws + "/ws/v5/private",
		"ws_business_url": ws + "/ws/v5/business",
	}
}

// obj is a JSON object of the wire.
type obj = map[string]any

// apiError is an OKX error: HTTP status, code and message.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.code + " " + e.msg }

func errParam(name string) *apiError {
	return &apiError{http.StatusBadRequest, "51000", "Parameter " + name + " error"}
}

func errEmpty(name string) *apiError {
	return &apiError{http.StatusBadRequest, "50014", "Parameter " + name + " can not be empty"}
}

func errNoInst() *apiError {
	return &apiError{http.StatusOK, "51001", "Instrument ID, Instrument ID code, or Spread ID doesn't exist."}
}

// envelope is OKX's response body. data is always an array.
type envelope struct {
	Code    string `json:"code"`
	Msg     string `json:"msg"`
	Data    any    `json:"data"`
	InTime  string `json:"inTime,omitempty"`
	OutTime string `json:"outTime,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, envelope{Code: e.code, Msg: e.msg, Data: []any{}})
}

// dec renders a decimal the way OKX does: plain digits, no exponent, no trailing zeros.
func dec(d decimal.Decimal) string { return d.String() }

func ms(t int64) string { return fmt.Sprint(t) }
