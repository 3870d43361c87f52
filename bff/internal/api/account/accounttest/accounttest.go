// Package accounttest mounts the account API on a test API, for tests of the account routes and of clients. It
// uses the humago adapter (net/http's ServeMux), as the BFF does.
package accounttest

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/exhub/exhub/bff/internal/api/account"
)

// New returns a test API serving the account routes with d.
func New(tb humatest.TB, d account.Deps) humatest.TestAPI {
	api, _ := NewHandler(tb, d)
	return api
}

// NewHandler is New plus the http.Handler serving the routes (for a real listener, such as the target of Kratos'
// web hooks or a multipart client).
func NewHandler(tb humatest.TB, d account.Deps) (humatest.TestAPI, http.Handler) {
	mux := http.NewServeMux()
	api := humago.New(mux, huma.DefaultConfig("exhub test", "0.0.0"))
	account.Register(api, d)
	return humatest.Wrap(tb, api), mux
}
