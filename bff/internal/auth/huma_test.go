package auth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/exhub/exhub/bff/internal/auth"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/kratostest"
)

// The huma middleware guards a state-changing operation like the net/http one and hands the member on.
func TestHumaMiddleware(t *testing.T) {
	t.Parallel()
	k := kratostest.Start(t)
	c := newChecker(t, config(k.PublicURL, k.AdminURL))
	_, api := humatest.New(t, huma.DefaultConfig("test", "0"))
	type out struct {
		Body struct {
			ID string `json:"id"`
			IP string `json:"ip"`
		}
	}
	huma.Register(api, huma.Operation{
		OperationID: "post-thing", Method: http.MethodPost, Path: "/api/v1/me/thing",
		Middlewares: huma.Middlewares{c.Huma()},
	}, func(ctx context.Context, _ *struct{}) (*out, error) {
		m, ok := auth.MemberFrom(ctx)
		if !ok {
			return nil, auth.Unauthorized()
		}
		o := &out{}
		o.Body.ID, o.Body.IP = m.ID, m.ClientIP
		return o, nil
	})
	b := authtest.NewBrowser(t, k.PublicURL)
	b.SignUp("huma")
	m, err := c.CheckCookie(context.Background(), b.SessionCookie())
	if err != nil {
		t.Fatal(err)
	}
	token := c.CSRFToken(m.SessionID)
	cookie := "Cookie: exhub_session=" + b.SessionCookie() + "; exhub_csrf=" + token

	code := func(args ...any) (int, string) {
		resp := api.Post("/api/v1/me/thing", args...)
		var p struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(resp.Body.Bytes(), &p)
		return resp.Code, p.Code
	}
	if st, c := code("Origin: https://evil.example", cookie, "X-CSRF-Token: "+token); st != 403 || c != auth.CodeOriginRefused {
		t.Fatalf("foreign origin: %d %q", st, c)
	}
	if st, c := code("Origin: http://127.0.0.1:8080", cookie); st != 403 || c != auth.CodeCSRFRefused {
		t.Fatalf("no token: %d %q", st, c)
	}
	if st, c := code("Origin: http://127.0.0.1:8080", "X-CSRF-Token: "+token); st != 401 || c != auth.CodeUnauthorized {
		t.Fatalf("no session: %d %q", st, c)
	}
	resp := api.Post("/api/v1/me/thing", "Origin: http://127.0.0.1:8080", cookie, "X-CSRF-Token: "+token)
	var got struct{ ID, IP string }
	if resp.Code != http.StatusOK || json.Unmarshal(resp.Body.Bytes(), &got) != nil || got.ID != m.ID || got.IP == "" {
		t.Fatalf("good call: %d %s", resp.Code, resp.Body)
	}
}
