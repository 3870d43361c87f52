// Package emulator serves Binance's spot and USDT-M futures REST and WebSocket dialects from a simulated venue
// (adapters/venue) on one HTTP listener: spot REST under /api/v3 and /sapi, futures REST under /fapi and
// /futures/data, spot WebSocket under /ws and /stream, futures WebSocket under /fws/ws and /fws/stream. See
// README.md for the route table, the test hooks and what is not emulated.
package emulator

import (
	"context"
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

// Demo credentials of the paper account created by New. They are not secret: the emulator only runs locally.
const (
	DemoAPIKey    = "exhubDemoBinanceKey0000000000000000000000000000000000000000000001"
	DemoAPISecret = "exhubDemoBinanceSecret00000000000000000000000000000000000000000001"
	// DemoAccount is the venue account behind the demo key.
	DemoAccount = "binance-demo"
)

// Credential maps an API key and its HMAC secret to a venue account.
type Credential struct {
	Key     string
	Secret  string
	Account string
	// Broker marks a master (broker) key: only such a key may call the broker endpoints (/sapi/v1/broker/...).
	// The demo key is one.
	Broker bool
}

// DefaultDemoReserve is what demo mode (exhub-emulators) deposits into the demo (broker master) account's spot
// wallet on top of its faucet funds, so the master can grant demo funds to thousands of sub-accounts.
func DefaultDemoReserve() map[string]decimal.Decimal {
	return map[string]decimal.Decimal{"USDT": decimal.NewFromInt(20_000_000), "BTC": decimal.NewFromInt(200),
		"ETH": decimal.NewFromInt(2_000)}
}

// Config sets up an emulator.
type Config struct {
	// Venue is the simulated exchange; it should use the "binance" profile. The caller owns it (and its Run).
	Venue *venue.Venue
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Credentials besides the demo one. Their accounts are created (not funded).
	Credentials []Credential
	// NoDemoAccount skips creating and funding the demo account.
	NoDemoAccount bool
	// DemoReserve is deposited into the demo account's spot wallet for the sub-accounts' demo grants (demo mode
	// uses DefaultDemoReserve); nil: none.
	DemoReserve map[string]decimal.Decimal
	// WSLifetime is how long a WebSocket connection lives before the server closes it (Binance: 24h).
	WSLifetime time.Duration
	// PingInterval between server ping frames (default 20s).
	PingInterval time.Duration
	// ListenKeyTTL is how long a listen key lives without a keepalive (Binance: 60 minutes).
	ListenKeyTTL time.Duration
	// SpotWeightLimit and FuturesWeightLimit per IP per minute (defaults 6000 and 2400).
	SpotWeightLimit    int
	FuturesWeightLimit int
}

// Server is a running emulator. Handler serves every route; Close stops its goroutines and connections.
type Server struct {
	cfg Config
	v   *venue.Venue
	log *slog.Logger

	spot   map[string]*venue.Instrument // native symbol -> instrument
	fut    map[string]*venue.Instrument
	native map[string]string // venue id -> native symbol
	byID   map[string]*venue.Instrument
	spotL  []*venue.Instrument
	futL   []*venue.Instrument

	mu     sync.Mutex
	creds  map[string]Credential
	keys   map[string]*listenKey  // listen key -> state
	sinks  map[*userSink]struct{} // running user data streams, for events the venue does not emit
	lim    *limiter
	conns  map[*wsConn]struct{}
	closed bool

	spotHub *hub
	futHub  *hub
	wallet  walletStore
	faults  *faults.Injector
	nextSub int64             // broker sub-accounts created (guarded by mu)
	subTags map[string]string // sub-account venue id -> its Binance tag (guarded by mu)
	tm      timers
	pm      priceMatches // orders placed or amended with priceMatch (pricematch.go)
	lists   orderLists   // spot order lists (orderlist.go)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mux    *http.ServeMux
}

// New builds an emulator on a venue, creates (and funds) the demo account, and starts the stream hubs.
func New(cfg Config) (*Server, error) {
	if cfg.Venue == nil {
		return nil, errors.New("binance emulator: nil venue")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WSLifetime <= 0 {
		cfg.WSLifetime = 24 * time.Hour
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 20 * time.Second
	}
	if cfg.ListenKeyTTL <= 0 {
		cfg.ListenKeyTTL = 60 * time.Minute
	}
	if cfg.SpotWeightLimit <= 0 {
		cfg.SpotWeightLimit = 6000
	}
	if cfg.FuturesWeightLimit <= 0 {
		cfg.FuturesWeightLimit = 2400
	}
	s := &Server{cfg: cfg, v: cfg.Venue, log: cfg.Logger.With("component", "binance-emulator"),
		spot: map[string]*venue.Instrument{}, fut: map[string]*venue.Instrument{}, native: map[string]string{}, byID: map[string]*venue.Instrument{},
		creds: map[string]Credential{}, keys: map[string]*listenKey{}, conns: map[*wsConn]struct{}{},
		sinks: map[*userSink]struct{}{}, faults: &faults.Injector{}, subTags: map[string]string{}}
	for _, in := range s.v.Instruments() {
		sym := in.Base + in.Quote
		s.native[in.ID] = sym
		s.byID[in.ID] = in
		switch in.Market {
		case venue.Spot:
			s.spot[sym] = in
			s.spotL = append(s.spotL, in)
		case venue.Perp:
			s.fut[sym] = in
			s.futL = append(s.futL, in)
		}
	}
	s.wallet = walletStore{transfers: map[string][]transferRec{}, withdrawals: map[string][]withdrawRec{},
		converts: map[string][]convertRec{}}
	s.lim = newLimiter(s.v, cfg.SpotWeightLimit, cfg.FuturesWeightLimit)
	ctx := context.Background()
	if !cfg.NoDemoAccount {
		if err := s.fundDemo(ctx); err != nil {
			return nil, err
		}
	}
	for _, c := range cfg.Credentials {
		if err := s.AddCredential(c); err != nil {
			return nil, err
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.spotHub = newHub(s, false)
	s.futHub = newHub(s, true)
	// The hubs subscribe to the venue here, not in their goroutines: a client that connects right after New
	// returns must get every book delta from then on.
	spotSub, futSub := s.spotHub.subscribe(s.ctx), s.futHub.subscribe(s.ctx)
	listSub := s.v.Subscribe(s.ctx, venue.Filter{Kinds: []venue.EventKind{venue.EvOrder}}, 1<<16)
	s.wg.Add(4)
	go func() { defer s.wg.Done(); s.spotHub.run(s.ctx, spotSub) }()
	go func() { defer s.wg.Done(); s.futHub.run(s.ctx, futSub) }()
	go func() { defer s.wg.Done(); s.janitor(s.ctx) }()
	go func() { defer s.wg.Done(); s.watchOrderLists(s.ctx, listSub) }()
	s.mux = s.routes()
	return s, nil
}

// fundDemo creates the demo account and funds it from the faucet: USDT in both wallets, and the faucet amounts of
// BTC and ETH in the trading wallet.
func (s *Server) fundDemo(ctx context.Context) error {
	if err := s.AddCredential(Credential{Key: DemoAPIKey, Secret: DemoAPISecret, Account: DemoAccount, Broker: true}); err != nil {
		return err
	}
	for asset, amt := range s.cfg.DemoReserve {
		if !amt.IsPositive() {
			continue
		}
		if _, err := s.v.Deposit(ctx, DemoAccount, asset, amt); err != nil {
			if errors.Is(err, venue.ErrUnknownAsset) {
				continue
			}
			return fmt.Errorf("binance emulator: demo reserve %s: %w", asset, err)
		}
		if _, err := s.v.Transfer(ctx, DemoAccount, asset, amt, venue.Funding, venue.TradingWallet); err != nil {
			return fmt.Errorf("binance emulator: demo reserve %s: %w", asset, err)
		}
	}
	funds := []struct {
		asset   string
		amt     decimal.Decimal
		trading decimal.Decimal
	}{
		{"USDT", decimal.NewFromInt(100000), decimal.NewFromInt(80000)},
		{"BTC", decimal.Zero, decimal.Zero},
		{"ETH", decimal.Zero, decimal.Zero},
	}
	for _, f := range funds {
		tx, err := s.v.Deposit(ctx, DemoAccount, f.asset, f.amt)
		if err != nil {
			if errors.Is(err, venue.ErrUnknownAsset) {
				continue
			}
			return fmt.Errorf("binance emulator: fund demo %s: %w", f.asset, err)
		}
		move := f.trading
		if move.IsZero() {
			move = tx.Amount
		}
		if _, err := s.v.Transfer(ctx, DemoAccount, f.asset, move, venue.Funding, venue.TradingWallet); err != nil {
			return fmt.Errorf("binance emulator: fund demo %s: %w", f.asset, err)
		}
	}
	return nil
}

// AddCredential registers an API key for an account (created if new).
func (s *Server) AddCredential(c Credential) error {
	if c.Key == "" || c.Secret == "" || c.Account == "" {
		return errors.New("binance emulator: credential needs key, secret and account")
	}
	if err := s.v.CreateAccount(c.Account); err != nil {
		return fmt.Errorf("binance emulator: create account: %w", err)
	}
	s.mu.Lock()
	s.creds[c.Key] = c
	s.mu.Unlock()
	return nil
}

// Handler serves the whole Binance dialect (REST and WebSocket) on one listener.
func (s *Server) Handler() http.Handler { return s.mux }

// Close stops the hubs, closes every WebSocket connection and waits for the goroutines it owns.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	conns := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.kill(closeGoingAway, "server closing")
	}
	s.cancel()
	s.wg.Wait()
}

// PluginSettings returns the Binance plugin settings that point every URL at an emulator served at baseURL
// (for example "http://127.0.0.1:7001").
func PluginSettings(baseURL string) map[string]string {
	base := strings.TrimRight(baseURL, "/")
	ws := base
	switch {
	case strings.HasPrefix(ws, "https://"):
		ws = "wss://" + strings.TrimPrefix(ws, "https://")
	case strings.HasPrefix(ws, "http://"):
		ws = "ws://" + strings.TrimPrefix(ws, "http://")
	}
	return map[string]string{
		"spot_rest_url":    base,
		"futures_rest_url": base,
		"spot_ws_url":      ws,
		"futures_ws_url":   ws + "/fws",
	}
}

// Faults is the injector behind faults.Path: tests arm lost answers for a client id here or over HTTP.
func (s *Server) Faults() *faults.Injector { return s.faults }

// Venue returns the venue the emulator serves.
func (s *Server) Venue() *venue.Venue { return s.v }

// instrument resolves a native symbol in one market.
func (s *Server) instrument(futures bool, sym string) (*venue.Instrument, bool) {
	if futures {
		in, ok := s.fut[sym]
		return in, ok
	}
	in, ok := s.spot[sym]
	return in, ok
}
