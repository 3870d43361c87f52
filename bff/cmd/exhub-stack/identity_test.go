package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// repoRoot walks up from the test's directory to the hub module's root.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/exhub/exhub\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repository root not found")
		}
		dir = parent
	}
}

func TestKratosEnvFollowsTheConfig(t *testing.T) {
	root := t.TempDir()
	t.Setenv("EXHUB_EDGE_ADDR", "127.0.0.1:18080")
	t.Setenv("EXHUB_KRATOS_PUBLIC_ADDR", "127.0.0.1:14433")
	t.Setenv("EXHUB_KRATOS_ADMIN_ADDR", "127.0.0.1:14434")
	t.Setenv("EXHUB_MAILPIT_SMTP_ADDR", "127.0.0.1:11025")
	t.Setenv("EXHUB_MAILPIT_ADDR", "127.0.0.1:18025")
	c := defaultConfig(root)
	env := map[string]string{}
	for _, kv := range kratosEnv(c) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, want := range map[string]string{
		"SERVE_PUBLIC_PORT":                     "14433",
		"SERVE_ADMIN_PORT":                      "14434",
		"SERVE_PUBLIC_BASE_URL":                 "http://127.0.0.1:18080/.ory/",
		"SELFSERVICE_FLOWS_VERIFICATION_UI_URL": "http://127.0.0.1:18080/otp",
		"SELFSERVICE_FLOWS_REGISTRATION_UI_URL": "http://127.0.0.1:18080/regist",
		"SELFSERVICE_FLOWS_RECOVERY_UI_URL":     "http://127.0.0.1:18080/forgotPassword_A",
		"SELFSERVICE_ALLOWED_RETURN_URLS":       `["http://127.0.0.1:18080","http://localhost:18080"]`,
		"COURIER_SMTP_CONNECTION_URI":           "smtp://127.0.0.1:11025/?disable_starttls=true",
		"DSN":                                   "sqlite://" + filepath.Join(root, ".data", "kratos", "kratos.sqlite") + "?_fk=true&mode=rwc&_journal_mode=WAL&_txlock=immediate&_busy_timeout=60000",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	var channels []struct {
		ID            string `json:"id"`
		Type          string `json:"type"`
		RequestConfig struct {
			URL  string `json:"url"`
			Body string `json:"body"`
		} `json:"request_config"`
	}
	if err := json.Unmarshal([]byte(env["COURIER_CHANNELS"]), &channels); err != nil {
		t.Fatalf("COURIER_CHANNELS %q: %v", env["COURIER_CHANNELS"], err)
	}
	if len(channels) != 1 || channels[0].ID != "sms" || channels[0].Type != "http" ||
		channels[0].RequestConfig.URL != "http://127.0.0.1:18025/api/v1/send" ||
		channels[0].RequestConfig.Body != "file://"+filepath.Join(root, "bff", "kratos", "sms.jsonnet") {
		t.Errorf("COURIER_CHANNELS = %+v", channels)
	}
	args := strings.Join(mailpitArgs(c), " ")
	for _, want := range []string{"--smtp 127.0.0.1:11025", "--listen 127.0.0.1:18025", "--database " + filepath.Join(root, ".data", "mailpit", "mailpit.db"), "--max 500"} {
		if !strings.Contains(args, want) {
			t.Errorf("mailpit args %q lack %q", args, want)
		}
	}
	if c.InboxURL() != "http://127.0.0.1:18080/inbox" {
		t.Errorf("inbox URL %q", c.InboxURL())
	}
}

// TestIdentityServicesDeliverCodesToTheInbox starts the stack's real Mailpit and Kratos (bin/mailpit, bin/kratos)
// on free ports with the repository's configuration, as `make run` does, and checks that a sign-up's e-mail and SMS
// land in the inbox and that Kratos sends browsers to the UI on the edge's address.
func TestIdentityServicesDeliverCodesToTheInbox(t *testing.T) {
	root := repoRoot(t)
	for _, k := range []string{"EXHUB_EDGE_ADDR", "EXHUB_KRATOS_PUBLIC_ADDR", "EXHUB_KRATOS_ADMIN_ADDR", "EXHUB_MAILPIT_SMTP_ADDR", "EXHUB_MAILPIT_ADDR"} {
		t.Setenv(k, freeAddr(t))
	}
	t.Setenv("EXHUB_DATA_DIR", t.TempDir())
	// A stand-in for the BFF on a port of its own: Kratos' web hooks must reach it there.
	hooks := make(chan string, 16)
	bff := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hooks <- r.URL.Path:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(bff.Close)
	t.Setenv("EXHUB_HTTP_ADDR", strings.TrimPrefix(bff.URL, "http://"))
	c := defaultConfig(root)
	svcs := identityServices(c)
	for _, svc := range svcs {
		if _, err := os.Stat(svc.path); err != nil {
			t.Fatalf("%s: %s not found: %s", svc.name, svc.path, svc.hint)
		}
	}
	for _, d := range []string{"mailpit", "kratos"} {
		if err := os.MkdirAll(c.data(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, svc := range svcs {
		if svc.prepare != nil {
			if err := svc.prepare(svc); err != nil {
				t.Fatalf("%s: prepare: %v", svc.name, err)
			}
		}
	}
	out := &syncBuf{}
	s := &Stack{cfg: c, log: slog.New(slog.NewTextHandler(io.Discard, nil)), out: out}
	t.Cleanup(s.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.startAll(ctx, svcs); err != nil {
		t.Fatalf("start mailpit and kratos: %v\n%s", err, out.String())
	}

	kratos := "http://" + c.KratosPublicAddr
	post := func(url string, body any) (int, []byte) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", url, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	getJSON := func(url string, out any) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: status %d: %v", url, resp.StatusCode, err)
		}
	}
	var flow struct {
		ID string `json:"id"`
	}
	getJSON(kratos+"/self-service/registration/api", &flow)
	if status, raw := post(kratos+"/self-service/registration?flow="+flow.ID, map[string]any{
		"method": "password", "password": "Tr4de!Hub#2026",
		"traits": map[string]any{"email": "stack@example.com", "phone": "+819055556666", "terms": true},
	}); status != http.StatusOK {
		t.Fatalf("register: status %d\n%s\n%s", status, raw, out.String())
	}

	// The registration's web hook went to this stack's BFF address, not to the default one.
	select {
	case p := <-hooks:
		if p != "/internal/kratos/hooks/registration" {
			t.Fatalf("the BFF got a hook at %s", p)
		}
	case <-time.After(time.Minute):
		t.Fatalf("no registration hook reached the BFF at %s\n%s", bff.URL, out.String())
	}

	// Both verification messages arrive: the e-mail over SMTP, the SMS through the HTTP channel.
	want := []string{"stack@example.com", "819055556666@sms.exhub.local"}
	var got []string
	for deadline := time.Now().Add(time.Minute); ; {
		var list struct {
			Messages []struct {
				To []struct {
					Address string `json:"Address"`
				} `json:"To"`
				Snippet string `json:"Snippet"`
			} `json:"messages"`
		}
		getJSON("http://"+c.MailpitAddr+"/api/v1/messages", &list)
		got = got[:0]
		for _, m := range list.Messages {
			for _, to := range m.To {
				if strings.Contains(m.Snippet, "code") {
					got = append(got, to.Address)
				}
			}
		}
		if !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(got, w) }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("inbox holds codes for %v, want %v\n%s", got, want, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Browser flows point at the UI on the edge's address.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, ui := range map[string]string{"verification": "/otp", "registration": "/regist", "recovery": "/forgotPassword_A", "login": "/login"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, kratos+"/self-service/"+path+"/browser", nil)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		loc := resp.Header.Get("Location")
		if wantPrefix := fmt.Sprintf("%s%s?flow=", c.PublicURL(), ui); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, wantPrefix) {
			t.Errorf("%s browser flow: status %d Location %q, want 303 to %s...", path, resp.StatusCode, loc, wantPrefix)
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("test context expired")
	}
}
