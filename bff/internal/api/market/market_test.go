package market

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/market"
)

// The package registers its routes on any huma API with only its own dependencies; the full server (with a real
// plugin) is tested in bff/internal/api.
func TestRegisterStandalone(t *testing.T) {
	_, api := humatest.New(t)
	svc := market.New(market.Options{Cache: cache.NewMemory(100),
		Exchanges: []market.Exchange{{Key: 3, Slug: "soon", Status: "coming_soon"}}})
	Register(api, Deps{Market: svc})
	for _, p := range []string{"/api/v1/instruments", "/api/v1/tickers", "/api/v1/movers", "/api/v1/candles",
		"/api/v1/orderbook", "/api/v1/trades"} {
		if api.OpenAPI().Paths[p] == nil || api.OpenAPI().Paths[p].Get.Tags[0] != "Market" {
			t.Errorf("%s not registered under Market", p)
		}
	}
	resp := api.Get("/api/v1/instruments?exchange=nope&type=SPOT")
	var m huma.ErrorModel
	if err := json.Unmarshal(resp.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if resp.Code != http.StatusUnprocessableEntity || len(m.Errors) != 1 || m.Errors[0].Location != "query.exchange" {
		t.Fatalf("unknown exchange: %d %s", resp.Code, resp.Body)
	}
	// Without analytics every candles request goes to the market service, which validates first.
	resp = api.Get("/api/v1/candles?exchange=soon&type=SPOT&symbol=BTCUSDT&interval=1m")
	if resp.Code != http.StatusUnprocessableEntity {
		t.Fatalf("candles of an exchange without a plugin: %d %s", resp.Code, resp.Body)
	}
}
