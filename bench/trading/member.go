package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"
)

// password passes the sign-up policy (6-15 characters, a digit, lower and upper case, a special character).
const password = "B3nch!Trade#7"

// Member is a signed-in member of the stack, as a browser holds it: the session cookie (in the jar), the CSRF
// token read from GET /api/v1/me, and the edge's origin.
type Member struct {
	Email  string
	edge   string
	client *http.Client
	csrf   string
}

// newHTTPClient is a keep-alive client for loopback requests with its own cookie jar.
func newHTTPClient(transport http.RoundTripper) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Register signs a new member up through the edge as the UI does: a Kratos browser registration flow started at
// /.ory/self-service/registration/browser, submitted as JSON through the BFF's self-service gate; then GET
// /api/v1/me for the CSRF cookie.
func Register(ctx context.Context, edge string, transport http.RoundTripper, tag string) (*Member, error) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	m := &Member{Email: fmt.Sprintf("bench-%s-%s@example.com", tag, hex.EncodeToString(b)), edge: edge,
		client: newHTTPClient(transport)}
	var flow struct {
		ID string `json:"id"`
		UI struct {
			Nodes []struct {
				Attributes struct {
					Name  string `json:"name"`
					Value any    `json:"value"`
				} `json:"attributes"`
			} `json:"nodes"`
		} `json:"ui"`
	}
	status, raw, err := m.do(ctx, http.MethodGet, "/.ory/self-service/registration/browser", nil, nil, &flow)
	if err != nil {
		return nil, fmt.Errorf("start registration: %w", err)
	}
	if status != http.StatusOK || flow.ID == "" {
		return nil, fmt.Errorf("start registration: status %d: %.300s", status, raw)
	}
	csrf := ""
	for _, n := range flow.UI.Nodes {
		if n.Attributes.Name == "csrf_token" {
			csrf, _ = n.Attributes.Value.(string)
		}
	}
	body := map[string]any{"method": "password", "csrf_token": csrf, "password": password,
		"traits": map[string]any{"email": m.Email, "terms": true}}
	status, raw, err = m.do(ctx, http.MethodPost, "/.ory/self-service/registration?flow="+url.QueryEscape(flow.ID),
		nil, body, nil)
	if err != nil {
		return nil, fmt.Errorf("register: %w", err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("register: status %d: %.300s", status, raw)
	}
	if err := m.readCSRF(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// readCSRF calls GET /api/v1/me, which sets the exhub_csrf cookie the UI echoes in X-CSRF-Token.
func (m *Member) readCSRF(ctx context.Context) error {
	// A 503 (the identity service slow to answer on a busy machine) is asked again, a few times at most.
	var status int
	var raw []byte
	var err error
	for try := 0; ; try++ {
		status, raw, err = m.do(ctx, http.MethodGet, "/api/v1/me", nil, nil, nil)
		if err != nil {
			return fmt.Errorf("GET /api/v1/me: %w", err)
		}
		if status != http.StatusServiceUnavailable || try == 4 {
			break
		}
		if err := sleepCtx(ctx, time.Second); err != nil {
			return err
		}
	}
	if status != http.StatusOK {
		return fmt.Errorf("GET /api/v1/me: status %d: %.300s", status, raw)
	}
	u, _ := url.Parse(m.edge)
	for _, c := range m.client.Jar.Cookies(u) {
		if c.Name == "exhub_csrf" {
			m.csrf = c.Value
		}
	}
	if m.csrf == "" {
		return errors.New("GET /api/v1/me set no exhub_csrf cookie")
	}
	return nil
}

// Cookie is the Cookie header the member's browser would send to the edge (for the WebSocket handshake).
func (m *Member) Cookie() string {
	u, _ := url.Parse(m.edge)
	var parts []string
	for _, c := range m.client.Jar.Cookies(u) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// do sends one request to the edge with the member's cookies; state-changing requests carry Origin and the CSRF
// header as the UI's do. The answer is decoded into out when it is JSON and out is given.
func (m *Member) do(ctx context.Context, method, path string, hdr map[string]string, body, out any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.edge+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != http.MethodGet {
		req.Header.Set("Origin", m.edge)
		if m.csrf != "" {
			req.Header.Set("X-CSRF-Token", m.csrf)
		}
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, nil, err
	}
	if out != nil && len(raw) > 0 && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, raw, fmt.Errorf("decode %s %s: %w", method, path, err)
		}
	}
	return resp.StatusCode, raw, nil
}

// WaitAccount waits (bounded by ctx) until GET /api/v1/accounts lists an active account on exchange.
func (m *Member) WaitAccount(ctx context.Context, exchange string) error {
	last := ""
	for {
		var out struct {
			Accounts []struct {
				Exchange string `json:"exchange"`
				Status   string `json:"status"`
				Reason   string `json:"status_reason"`
			} `json:"accounts"`
			Broker *bool `json:"broker"`
		}
		status, raw, err := m.do(ctx, http.MethodGet, "/api/v1/accounts", nil, nil, &out)
		if err == nil && status == http.StatusOK {
			if out.Broker != nil && !*out.Broker && len(out.Accounts) == 0 {
				return fmt.Errorf("%s: the stack's broker mode is off, so members get no demo accounts", m.Email)
			}
			for _, a := range out.Accounts {
				if a.Exchange == exchange {
					if a.Status == "active" {
						return nil
					}
					if a.Status == "failed" {
						return fmt.Errorf("%s: the %s account failed: %s", m.Email, exchange, a.Reason)
					}
					last = a.Status
				}
			}
		} else if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("status %d: %.200s", status, raw)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: no active %s account (last seen: %q): %w", m.Email, exchange, last, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Problem is the part of an RFC 9457 answer the tool counts by.
type Problem struct {
	Code   string `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

// problemCode names a refused answer: the problem's code, else its title, else the HTTP status.
func problemCode(status int, raw []byte) string {
	var p Problem
	if json.Unmarshal(raw, &p) == nil {
		if p.Code != "" {
			return p.Code
		}
		if p.Title != "" {
			return fmt.Sprintf("%d %s", status, p.Title)
		}
	}
	return fmt.Sprintf("status %d", status)
}

// OrderAnswer is the part of an order the tool reads.
type OrderAnswer struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// Place sends POST /api/v1/orders with a fresh Idempotency-Key; it returns the HTTP status, the order and, for a
// refusal, the problem code.
func (m *Member) Place(ctx context.Context, body map[string]any) (int, OrderAnswer, string, error) {
	key := make([]byte, 12)
	_, _ = rand.Read(key)
	var o OrderAnswer
	status, raw, err := m.do(ctx, http.MethodPost, "/api/v1/orders",
		map[string]string{"Idempotency-Key": hex.EncodeToString(key)}, body, &o)
	if err != nil {
		return status, o, "transport: " + shortErr(err), err
	}
	if status >= 300 {
		return status, o, problemCode(status, raw), nil
	}
	return status, o, "", nil
}

// Cancel sends DELETE /api/v1/orders/{id}.
func (m *Member) Cancel(ctx context.Context, id string) (int, string, error) {
	status, raw, err := m.do(ctx, http.MethodDelete, "/api/v1/orders/"+url.PathEscape(id), nil, nil, nil)
	if err != nil {
		return status, "transport: " + shortErr(err), err
	}
	if status >= 300 {
		return status, problemCode(status, raw), nil
	}
	return status, "", nil
}

// shortErr keeps an error's last part (a transport error repeats the URL in front).
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}
