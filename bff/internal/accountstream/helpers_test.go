package accountstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/stream"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// patience bounds every wait: what the tests wait for normally comes at once; only a broken stream reaches it.
const patience = time.Minute

func TestMain(m *testing.M) { os.Exit(plugintest.Run(m, nil, "reference")) }

// accounts is an in-memory account directory: member -> exchange -> account id.
type accounts struct {
	mu    sync.Mutex
	byMem map[string]map[string]string
}

func newAccounts() *accounts { return &accounts{byMem: map[string]map[string]string{}} }

func (a *accounts) add(member, exchange, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byMem[member] == nil {
		a.byMem[member] = map[string]string{}
	}
	a.byMem[member][exchange] = id
}

func (a *accounts) Accounts(_ context.Context, member string) ([]accountstream.Account, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []accountstream.Account
	for ex, id := range a.byMem[member] {
		out = append(out, accountstream.Account{ID: id, Exchange: ex})
	}
	return out, nil
}

func (a *accounts) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id, ok := a.byMem[member][exchange]
	if !ok {
		return nil, fmt.Errorf("%s: %w", exchange, feed.ErrNoAccount)
	}
	return ref(id), nil
}

// ref is the paper account of the reference exchange named by id.
func ref(id string) *exchangev1.AccountRef {
	return &exchangev1.AccountRef{AccountId: id, ApiKey: "key-" + id, ApiSecret: "secret-" + id}
}

// identity is a stand-in for Kratos' whoami: session cookie value -> identity id; a revoked session answers 401.
type identity struct {
	mu       sync.Mutex
	sessions map[string]string
	srv      *httptest.Server
}

func startIdentity(t *testing.T) *identity {
	id := &identity{sessions: map[string]string{}}
	id.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie("exhub_session")
		id.mu.Lock()
		member, ok := "", false
		if err == nil {
			member, ok = id.sessions[ck.Value]
		}
		id.mu.Unlock()
		if r.URL.Path != "/sessions/whoami" || !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":401,"id":"session_inactive"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "session-" + ck.Value, "active": true, "authenticator_assurance_level": "aal1",
			"expires_at": time.Now().Add(time.Hour), "authenticated_at": time.Now(),
			"identity": map[string]any{"id": member, "traits": map[string]any{"email": member + "@example.test"},
				"credentials": map[string]any{"password": map[string]any{}}},
		})
	}))
	t.Cleanup(id.srv.Close)
	return id
}

func (id *identity) login(cookie, member string) {
	id.mu.Lock()
	defer id.mu.Unlock()
	id.sessions[cookie] = member
}

func (id *identity) logout(cookie string) {
	id.mu.Lock()
	defer id.mu.Unlock()
	delete(id.sessions, cookie)
}

func (id *identity) checker(t *testing.T) *auth.Checker {
	cfg := auth.Defaults()
	cfg.KratosPublicURL = id.srv.URL
	cfg.KratosAdminURL = id.srv.URL
	cfg.CacheTTL = 100 * time.Millisecond
	cfg.CSRFKey = secret.New("0123456789abcdef0123456789abcdef-test-key")
	c, err := auth.NewChecker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startHost runs the real reference plugin under a plugin host until the test ends.
func startHost(t *testing.T) *pluginhost.Host {
	t.Helper()
	h := pluginhost.New([]pluginhost.Spec{{Key: 100, Slug: "reference", Name: "Reference Exchange", Path: plugintest.Path("reference"),
		Settings: map[string]string{"tick_interval": "50ms"}}}, pluginhost.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	sup, _ := h.Get("reference")
	wctx, wcancel := context.WithTimeout(ctx, patience)
	defer wcancel()
	if err := sup.WaitRunning(wctx); err != nil {
		t.Fatalf("reference plugin: %v", err)
	}
	return h
}

// placeMarket buys qty BTC at market on the reference exchange for the paper account id.
func placeMarket(t *testing.T, h *pluginhost.Host, id, clientID, qty string) *exchangev1.Order {
	t.Helper()
	sup, _ := h.Get("reference")
	var o *exchangev1.Order
	err := sup.Call(t.Context(), "PlaceOrder", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		resp, err := c.PlaceOrder(ctx, &exchangev1.PlaceOrderRequest{Account: ref(id),
			MarketType: exchangev1.MarketType_MARKET_TYPE_SPOT, Symbol: "BTCUSDT", Side: exchangev1.Side_SIDE_BUY,
			Type: exchangev1.OrderType_ORDER_TYPE_MARKET, Qty: qty, ClientOrderId: clientID})
		o = resp.GetOrder()
		return err
	})
	if err != nil {
		t.Fatalf("PlaceOrder: %v", err)
	}
	return o
}

// startManager runs a manager until the test ends (or stop is called).
func startManager(t *testing.T, o accountstream.Options) (m *accountstream.Manager, stop func()) {
	t.Helper()
	m = accountstream.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return m, stop
}

// startGateway serves the stream gateway with private channels.
func startGateway(t *testing.T, h *pluginhost.Host, m *accountstream.Manager, sessions stream.Sessions, cfg stream.Config) *httptest.Server {
	t.Helper()
	cfg.InsecureSkipOriginCheck = true
	gw := stream.New(stream.Options{Config: cfg, Source: stream.HostSource{Host: h}, Sessions: sessions, Accounts: m})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = gw.Run(ctx) }()
	srv := httptest.NewServer(gw)
	t.Cleanup(func() { cancel(); <-done; srv.Close() })
	return srv
}

// client is a test WebSocket client.
type client struct {
	t    *testing.T
	ws   *websocket.Conn
	msgs chan map[string]any
	done chan error
}

func dial(t *testing.T, srv *httptest.Server, cookie string) *client {
	t.Helper()
	var hdr http.Header
	if cookie != "" {
		hdr = http.Header{"Cookie": {"exhub_session=" + cookie}}
	}
	var ws *websocket.Conn
	deadline := time.Now().Add(patience)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		var err error
		ws, _, err = websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPHeader: hdr})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) { // the gateway answers 503 until it runs
			t.Fatalf("dial: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ws.SetReadLimit(1 << 22)
	c := &client{t: t, ws: ws, msgs: make(chan map[string]any, 100000), done: make(chan error, 1)}
	go func() { // owned by the client; ends when the connection closes
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				c.done <- err
				close(c.msgs)
				return
			}
			var batch []map[string]any
			if len(b) > 0 && b[0] == '[' {
				err = json.Unmarshal(b, &batch)
			} else {
				var m map[string]any
				err = json.Unmarshal(b, &m)
				batch = append(batch, m)
			}
			if err != nil {
				c.done <- err
				close(c.msgs)
				return
			}
			for _, m := range batch {
				c.msgs <- m
			}
		}
	}()
	t.Cleanup(func() { _ = ws.CloseNow() })
	if m := c.next(); m["type"] != "hello" {
		t.Fatalf("first message %v", m)
	}
	return c
}

func (c *client) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) next() map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatalf("connection ended: %v", <-c.done)
		}
		return m
	case <-time.After(patience):
		c.t.Fatalf("no message within %s", patience)
	}
	return nil
}

// until reads messages until f returns true, giving each to f.
func (c *client) until(f func(map[string]any) bool) map[string]any {
	c.t.Helper()
	for {
		if m := c.next(); f(m) {
			return m
		}
	}
}

func privSub(id, channel, exchange string) map[string]any {
	return map[string]any{"op": "subscribe", "id": id, "channel": channel, "exchange": exchange}
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
