package apiutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"
)

func TestProblem(t *testing.T) {
	rec := httptest.NewRecorder()
	Problem(rec, http.StatusNotFound, "no API route GET /api/x")
	var m huma.ErrorModel
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 404 || rec.Header().Get("Content-Type") != "application/problem+json" || m.Status != 404 ||
		m.Title != "Not Found" || m.Detail != "no API route GET /api/x" {
		t.Fatalf("%d %s %+v", rec.Code, rec.Header().Get("Content-Type"), m)
	}
}

func TestErrorMapping(t *testing.T) {
	var se huma.StatusError
	err := Unavailable(http.StatusServiceUnavailable, 1200*time.Millisecond, "plugin restarting")
	if !errors.As(err, &se) || se.GetStatus() != 503 {
		t.Fatalf("unavailable: %v", err)
	}
	var hh huma.HeadersError
	if !errors.As(err, &hh) || hh.GetHeaders().Get("Retry-After") != "2" {
		t.Fatalf("Retry-After rounds up to whole seconds: %v", err)
	}
	if !errors.As(Unavailable(502, 0, "x"), &hh) || hh.GetHeaders().Get("Retry-After") != "1" {
		t.Fatal("Retry-After is at least 1")
	}
	if !errors.As(Error("market data", fmt.Errorf("call: %w", context.Canceled)), &se) || se.GetStatus() != StatusClientClosed {
		t.Fatal("canceled is 499")
	}
	err = Error("market data", errors.New("secret internals"))
	if !errors.As(err, &se) || se.GetStatus() != 500 || strings.Contains(err.Error(), "secret internals") {
		t.Fatalf("500: %v", err)
	}
}

// guard lets requests with the header X-Test-Session through and answers 401 otherwise.
type guard struct{ schemes int }

func (g *guard) Huma() func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		if ctx.Header("X-Test-Session") == "" {
			ctx.SetStatus(http.StatusUnauthorized)
			return
		}
		next(ctx)
	}
}

func (g *guard) RegisterSecurityScheme(api huma.API) {
	g.schemes++
	api.OpenAPI().Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		SecurityScheme: {Type: "apiKey", In: "cookie", Name: "exhub_session"},
	}
}

func TestPrivate(t *testing.T) {
	_, api := humatest.New(t)
	g := &guard{}
	g.RegisterSecurityScheme(api)
	op := Private(g, huma.Operation{OperationID: "get-secret", Method: http.MethodGet, Path: "/api/v1/secret",
		Errors: []int{http.StatusUnauthorized, http.StatusUnprocessableEntity}})
	huma.Register(api, op, func(context.Context, *struct{}) (*struct{ Body string }, error) {
		return &struct{ Body string }{Body: "ok"}, nil
	})
	if resp := api.Get("/api/v1/secret"); resp.Code != http.StatusUnauthorized {
		t.Fatalf("without a session: %d", resp.Code)
	}
	if resp := api.Get("/api/v1/secret", "X-Test-Session: 1"); resp.Code != 200 {
		t.Fatalf("with a session: %d %s", resp.Code, resp.Body)
	}
	doc := api.OpenAPI().Paths["/api/v1/secret"].Get
	if len(doc.Security) != 1 || doc.Security[0][SecurityScheme] == nil {
		t.Fatalf("security %v", doc.Security)
	}
	for _, s := range []string{"401", "403", "422", "503"} {
		if doc.Responses[s] == nil {
			t.Errorf("no %s response documented", s)
		}
	}
	n := 0
	for _, e := range op.Errors {
		if e == 401 {
			n++
		}
	}
	if n != 1 || !slices.Contains(op.Errors, 403) {
		t.Fatalf("401 listed twice: %v", op.Errors)
	}
}
