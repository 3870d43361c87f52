package wallet_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/shopspring/decimal"

	binanceemu "github.com/exhub/exhub/adapters/binance/emulator"
	okxemu "github.com/exhub/exhub/adapters/okx/emulator"
	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/bff/internal/api/wallet"
	"github.com/exhub/exhub/bff/internal/market"
	"github.com/exhub/exhub/bff/internal/pluginhost"
	"github.com/exhub/exhub/bff/internal/plugintest"
	"github.com/exhub/exhub/bff/internal/store"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// The read routes against the Binance and OKX plugins talking to their emulators (each exchange's own dialect over
// a simulated venue): member a has the emulators' demo accounts, member b a broker sub-account on Binance only.

func startVenue(t *testing.T, profile string, build func(v *venue.Venue) (http.Handler, func(), error)) string {
	t.Helper()
	v, err := venue.New(venue.Config{Profile: profile, Seed: 11, Simulate: true, HistoryDays: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = v.Run(ctx) }()
	h, closeEmu, err := build(v)
	if err != nil {
		cancel()
		<-done
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		closeEmu()
		cancel()
		<-done
		v.Close()
	})
	return srv.URL
}

// emuAccounts: a on both emulators' demo accounts, b on a Binance sub-account.
type emuAccounts struct {
	mu   sync.Mutex
	refs map[string]map[string]*exchangev1.AccountRef
}

func (e *emuAccounts) AccountRef(_ context.Context, member, exchange string) (*exchangev1.AccountRef, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ref, ok := e.refs[member][exchange]; ok {
		return ref, nil
	}
	return nil, fmt.Errorf("%s on %s: %w", member, exchange, errNoAccount)
}

func TestReadsOnTheEmulators(t *testing.T) {
	reserve := map[string]decimal.Decimal{"USDT": decimal.NewFromInt(100_000), "BTC": decimal.NewFromInt(2)}
	bURL := startVenue(t, "binance", func(v *venue.Venue) (http.Handler, func(), error) {
		s, err := binanceemu.New(binanceemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler), DemoReserve: reserve})
		if err != nil {
			return nil, nil, err
		}
		return s.Handler(), s.Close, nil
	})
	oURL := startVenue(t, "okx", func(v *venue.Venue) (http.Handler, func(), error) {
		s, err := okxemu.New(okxemu.Config{Venue: v, Logger: slog.New(slog.DiscardHandler), DisableRateLimits: true, DemoReserve: reserve})
		if err != nil {
			return nil, nil, err
		}
		return s.Handler(), s.Close, nil
	})
	host := pluginhost.New([]pluginhost.Spec{
		{Key: 1, Slug: "binance", Name: "Binance", Path: plugintest.Path("binance"), Settings: binanceemu.PluginSettings(bURL)},
		{Key: 2, Slug: "okx", Name: "OKX", Path: plugintest.Path("okx"), Settings: okxemu.PluginSettings(oURL)},
	}, pluginhost.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	hdone := make(chan struct{})
	go func() { defer close(hdone); host.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-hdone })
	for _, sup := range host.Supervisors() {
		wctx, wcancel := context.WithTimeout(ctx, wait)
		err := sup.WaitRunning(wctx)
		wcancel()
		if err != nil {
			t.Fatalf("%s: %v", sup.Slug(), err)
		}
	}
	binance, _ := host.Get("binance")
	masterB := &exchangev1.AccountRef{AccountId: "broker:binance", ApiKey: binanceemu.DemoAPIKey, ApiSecret: binanceemu.DemoAPISecret}
	masterO := &exchangev1.AccountRef{AccountId: "broker:okx", ApiKey: okxemu.DemoAPIKey, ApiSecret: okxemu.DemoAPISecret,
		Passphrase: okxemu.DemoPassphrase}
	// b's sub-account, made with the master's credentials as broker mode does.
	var sub string
	var key *exchangev1.CreateSubAccountApiKeyResponse
	call := func(method string, fn func(context.Context, exchangev1.ExchangeClient) error) {
		t.Helper()
		cctx, ccancel := context.WithTimeout(context.Background(), wait)
		defer ccancel()
		if err := binance.Call(cctx, method, fn); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	call("CreateSubAccount", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		r, err := c.CreateSubAccount(ctx, &exchangev1.CreateSubAccountRequest{Account: masterB, Label: "wreadsb", ClientRequestId: "wreadsb"})
		sub = r.GetSubAccount().GetSubAccountId()
		return err
	})
	call("CreateSubAccountApiKey", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		var err error
		key, err = c.CreateSubAccountApiKey(ctx, &exchangev1.CreateSubAccountApiKeyRequest{Account: masterB, SubAccountId: sub, Label: "wreadsb"})
		return err
	})
	acc := &emuAccounts{refs: map[string]map[string]*exchangev1.AccountRef{
		"a": {"binance": masterB, "okx": masterO},
		"b": {"binance": {AccountId: "b-binance", ApiKey: key.GetApiKey(), ApiSecret: key.GetApiSecret()}},
	}}
	st, err := store.Open(context.Background(), store.DefaultConfig(t.TempDir()), store.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	mkt := market.New(market.Options{Exchanges: market.FromHost(host, []market.Exchange{
		{Key: 1, Slug: "binance", Status: "active"}, {Key: 2, Slug: "okx", Status: "active"}})})
	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("exhub test", "0.0.0"))
	wallet.Register(api, wallet.Deps{Guard: readGuard{}, Exchanges: []string{"binance", "okx"}, Accounts: acc,
		NoAccount: errNoAccount, Plugins: host, Prices: mkt, Store: st})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := &readEnv{t: t, url: srv.URL, sup: binance}

	// a moves 3 USDT into the trading wallet on Binance (the demo reserve sits in spot).
	call("Transfer", func(ctx context.Context, c exchangev1.ExchangeClient) error {
		_, err := c.Transfer(ctx, &exchangev1.TransferRequest{Account: masterB, Asset: "USDT", Amount: "3", ClientId: "a-emu-transfer-1",
			From: exchangev1.WalletType_WALLET_TYPE_FUNDING, To: exchangev1.WalletType_WALLET_TYPE_TRADING})
		return err
	})

	// Coins are valued from the market's tickers; on a loaded machine the first read of them can fail (the coin is
	// then shown unvalued), so the overview is read again until BTC has its price.
	var a reply
	for deadline := time.Now().Add(wait); ; {
		a = e.get("a", "/api/v1/wallet/overview", 200)
		btc := coin(a.list("exchanges")[0], "trading", "BTC")
		if p, _ := btc["usdt_price"].(string); p != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	total := decimal.Zero
	for _, ex := range a.list("exchanges") {
		if ex["status"] != "ok" {
			t.Fatalf("a's %v: %s", ex["exchange"], a.raw)
		}
		total = total.Add(dec(t, ex["total_usdt"].(string)))
	}
	if !total.Equal(dec(t, a.str("total_usdt"))) || !total.GreaterThan(decimal.Zero) {
		t.Fatalf("a's total %s, exchanges add up to %s", a.str("total_usdt"), total)
	}
	bin := a.list("exchanges")[0]
	if tr := coin(bin, "trading", "USDT"); tr == nil || !dec(t, tr["total"].(string)).GreaterThanOrEqual(dec(t, "3")) || tr["usdt_value"] != tr["total"] {
		t.Fatalf("a's trading USDT on binance %v", tr)
	}
	if btc := coin(bin, "trading", "BTC"); btc == nil || !dec(t, btc["usdt_price"].(string)).IsPositive() {
		t.Fatalf("a's BTC on binance, priced from the market %v: %s", btc, a.raw)
	}
	// b: Binance's sub-account, no account on OKX.
	b := e.get("b", "/api/v1/wallet/overview", 200)
	if exs := b.list("exchanges"); exs[0]["status"] != "ok" || exs[1]["status"] != "no_account" {
		t.Fatalf("b's overview %s", b.raw)
	}
	if c := coin(b.list("exchanges")[0], "trading", "BTC"); c != nil {
		t.Fatalf("b sees BTC a holds: %v", c)
	}

	// Coins and networks, deposit addresses of each member's own account.
	assets := e.get("a", "/api/v1/wallet/assets?exchange=binance", 200)
	var usdt map[string]any
	for _, x := range assets.list("assets") {
		if x["coin"] == "USDT" {
			usdt = x
		}
	}
	if usdt == nil || len(usdt["networks"].([]any)) == 0 {
		t.Fatalf("binance assets %s", assets.raw)
	}
	net := usdt["networks"].([]any)[0].(map[string]any)
	// The emulator names the step (the venue's precision of USDT, 8 decimals): the precision is its decimals.
	if !dec(t, net["withdraw_min"].(string)).IsPositive() || net["withdraw_step"] != "0.00000001" || net["precision"] != float64(8) {
		t.Fatalf("USDT network %v", net)
	}
	q := "/api/v1/wallet/deposit-address?exchange=binance&coin=USDT&network=" + net["network"].(string)
	addrA, addrB := e.get("a", q, 200), e.get("b", q, 200)
	if addrA.str("address") == "" || addrA.str("address") == addrB.str("address") {
		t.Fatalf("deposit addresses a %s, b %s", addrA.raw, addrB.raw)
	}

	// Histories: a's transfer is a's only; every history answers on both exchanges.
	tr := e.get("a", "/api/v1/wallet/transfers?exchange=binance&coin=USDT", 200).list("items")
	found := false
	for _, x := range tr {
		found = found || (x["amount"] == "3" && x["from"] == "funding" && x["to"] == "trading")
	}
	if !found {
		t.Fatalf("a's transfers %v", tr)
	}
	if got := e.get("b", "/api/v1/wallet/transfers?exchange=binance", 200).list("items"); len(got) != 0 {
		t.Fatalf("b sees transfers %v", got)
	}
	for _, ex := range []string{"binance", "okx"} {
		for _, h := range []string{"deposits", "withdrawals", "transfers", "converts"} {
			r := e.do("a", http.MethodGet, "/api/v1/wallet/"+h+"?exchange="+ex, nil)
			if r.status != 200 || r.body["items"] == nil {
				t.Fatalf("a's %s on %s: %d %s", h, ex, r.status, r.raw)
			}
		}
	}
	wantProblem(t, e.get("b", "/api/v1/wallet/deposits?exchange=okx", 409), "no_account", "exchange")
	if r := e.get("b", "/api/v1/wallet/withdrawals?exchange=binance", 200); strings.Contains(r.raw, "a-emu") {
		t.Fatalf("b's withdrawals %s", r.raw)
	}
}
