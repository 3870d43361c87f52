// Package accounttest mounts the account API on a humatest API, for tests of the account routes and of clients.
package accounttest

import (
	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/exhub/exhub/bff/internal/api/account"
)

// New returns a test API serving the account routes with d.
func New(tb humatest.TB, d account.Deps) humatest.TestAPI {
	_, api := humatest.New(tb, huma.DefaultConfig("exhub test", "0.0.0"))
	account.Register(api, d)
	return api
}
