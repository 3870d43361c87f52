package kratostest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// MailpitBinEnv names the environment variable that overrides the Mailpit binary path.
const MailpitBinEnv = "EXHUB_MAILPIT_BIN"

// MailpitInstallHint is the command that installs the pinned Mailpit, from the repository root.
const MailpitInstallHint = "make build (or: scripts/tools.sh mailpit)"

// SMSDomain is the mail domain under which the demo inbox files text messages:
// an SMS to +819012345678 arrives as a mail to 819012345678@sms.exhub.local
// (see bff/kratos/sms.jsonnet).
const SMSDomain = "sms.exhub.local"

// waitTimeout bounds every wait for a message: generous, as the courier polls
// its queue about once a second and a loaded machine may be slower.
const waitTimeout = 60 * time.Second

// Inbox is a running Mailpit owned by one test: an SMTP server and its REST
// API (the demo stack's mail and SMS inbox).
type Inbox struct {
	// SMTPAddr is the SMTP listener, host:port.
	SMTPAddr string
	// URL is the HTTP API base, e.g. http://127.0.0.1:41235 (no trailing slash);
	// messages are listed at URL+"/api/v1/messages".
	URL string
	// LogPath is the file receiving Mailpit's output.
	LogPath string

	cmd  *exec.Cmd
	done chan struct{}

	mu   sync.Mutex
	seen map[string]bool // message IDs already returned by WaitForMessage
}

// Message is one message in the inbox, e-mail or SMS.
type Message struct {
	ID      string
	From    string
	To      []string
	Subject string
	Text    string
	Tags    []string
	Created time.Time
}

var codeLine = regexp.MustCompile(`(?m)(?:^|:)[ \t]*([0-9]{6})[ \t]*\r?$`)

// Code returns the 6-digit one-time code of a Kratos message: the code stands
// alone on a line in e-mails and after a colon in SMS ("Your verification code
// is: 123456"). It is empty when there is none.
func (m Message) Code() string {
	if c := codeLine.FindStringSubmatch(m.Text); c != nil {
		return c[1]
	}
	return ""
}

// MailpitBinary returns the Mailpit binary to run: $EXHUB_MAILPIT_BIN or <root>/bin/mailpit.
func MailpitBinary(root string) (string, error) {
	path := os.Getenv(MailpitBinEnv)
	if path == "" {
		path = filepath.Join(root, "bin", "mailpit")
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("mailpit binary %s: %w; install it with: %s", path, err, MailpitInstallHint)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("mailpit binary %s is not an executable file; install it with: %s", path, MailpitInstallHint)
	}
	return path, nil
}

// InboxAddress is the inbox address of a recipient: e-mail addresses as they
// are, E.164 phone numbers as <digits>@sms.exhub.local.
func InboxAddress(recipient string) string {
	if strings.HasPrefix(recipient, "+") {
		return strings.TrimPrefix(recipient, "+") + "@" + SMSDomain
	}
	return strings.ToLower(recipient)
}

// StartInbox serves Mailpit on free loopback ports with its database in a
// temporary directory until the test ends.
func StartInbox(t testing.TB) *Inbox {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := MailpitBinary(root)
	if err != nil {
		t.Fatal(err)
	}
	smtpPort, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	httpPort, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for httpPort == smtpPort {
		if httpPort, err = FreePort(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	in := &Inbox{
		SMTPAddr: fmt.Sprintf("127.0.0.1:%d", smtpPort),
		URL:      fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		LogPath:  filepath.Join(dir, "mailpit.log"),
		seen:     map[string]bool{},
	}
	logFile, err := os.Create(in.LogPath)
	if err != nil {
		t.Fatalf("create mailpit log: %v", err)
	}
	t.Cleanup(func() { _ = logFile.Close() })
	in.cmd = exec.Command(bin, MailpitArgs(in.SMTPAddr, strings.TrimPrefix(in.URL, "http://"), filepath.Join(dir, "mailpit.db"))...)
	in.cmd.Dir = dir
	in.cmd.Stdout, in.cmd.Stderr = logFile, logFile
	if err := in.cmd.Start(); err != nil {
		t.Fatalf("start mailpit: %v", err)
	}
	in.done = make(chan struct{})
	go func() { // ends when Mailpit ends; the cleanup below ends Mailpit
		_ = in.cmd.Wait()
		close(in.done)
	}()
	t.Cleanup(func() { in.stop(t) })

	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if err := in.waitReady(ctx); err != nil {
		t.Fatalf("mailpit not ready: %v\n--- mailpit log ---\n%s", err, in.Log())
	}
	return in
}

// MailpitArgs are the arguments the demo stack and the tests run Mailpit with:
// SMTP and HTTP on the given loopback addresses, a database file, at most 500
// messages kept, no reverse DNS or version check (no internet).
func MailpitArgs(smtpAddr, httpAddr, database string) []string {
	return []string{
		"--smtp", smtpAddr, "--listen", httpAddr, "--database", database,
		"--max", "500", "--smtp-disable-rdns", "--disable-version-check",
		"--label", "exhub demo inbox",
	}
}

func (in *Inbox) waitReady(ctx context.Context) error {
	return waitHTTPReady(ctx, in.URL+"/readyz", "mailpit", in.cmd, in.done)
}

func (in *Inbox) stop(t testing.TB) { stopChild(t, "mailpit", in.cmd, in.done) }

// Log returns the last lines of Mailpit's log, for failure messages.
func (in *Inbox) Log() string {
	b, err := os.ReadFile(in.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return tail(string(b), 40)
}

// Messages lists what the inbox holds, newest first, as its API reports it.
func (in *Inbox) Messages(ctx context.Context) ([]Message, error) {
	var list struct {
		Messages []struct {
			ID   string `json:"ID"`
			From struct {
				Address string `json:"Address"`
			} `json:"From"`
			To []struct {
				Address string `json:"Address"`
			} `json:"To"`
			Subject string    `json:"Subject"`
			Tags    []string  `json:"Tags"`
			Created time.Time `json:"Created"`
		} `json:"messages"`
	}
	if err := in.get(ctx, "/api/v1/messages?limit=500", &list); err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(list.Messages))
	for _, m := range list.Messages {
		msg := Message{ID: m.ID, From: m.From.Address, Subject: m.Subject, Tags: m.Tags, Created: m.Created}
		for _, to := range m.To {
			msg.To = append(msg.To, strings.ToLower(to.Address))
		}
		out = append(out, msg)
	}
	return out, nil
}

// Message fetches one message with its text.
func (in *Inbox) Message(ctx context.Context, id string) (Message, error) {
	var m struct {
		ID   string `json:"ID"`
		From struct {
			Address string `json:"Address"`
		} `json:"From"`
		To []struct {
			Address string `json:"Address"`
		} `json:"To"`
		Subject string    `json:"Subject"`
		Text    string    `json:"Text"`
		Tags    []string  `json:"Tags"`
		Date    time.Time `json:"Date"`
	}
	if err := in.get(ctx, "/api/v1/message/"+url.PathEscape(id), &m); err != nil {
		return Message{}, err
	}
	msg := Message{ID: m.ID, From: m.From.Address, Subject: m.Subject, Text: m.Text, Tags: m.Tags, Created: m.Date}
	for _, to := range m.To {
		msg.To = append(msg.To, strings.ToLower(to.Address))
	}
	return msg, nil
}

func (in *Inbox) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.URL+path, nil)
	if err != nil {
		return fmt.Errorf("inbox request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("inbox GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("inbox GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("inbox GET %s: HTTP %d: %s", path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("inbox GET %s: %w", path, err)
	}
	return nil
}

// WaitForMessage waits for the oldest message to recipient (an e-mail address
// or an E.164 phone number) that this Inbox has not returned before, and
// returns it with its text. Successive calls thus return a recipient's
// messages in the order they arrived. It fails the test after a minute.
func (in *Inbox) WaitForMessage(t testing.TB, recipient string) Message {
	t.Helper()
	addr := InboxAddress(recipient)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	for {
		msgs, err := in.Messages(ctx)
		if err != nil && ctx.Err() == nil {
			t.Fatalf("list inbox: %v\n%s", err, in.Log())
		}
		for i := len(msgs) - 1; i >= 0; i-- { // oldest first
			m := msgs[i]
			if !containsAddr(m.To, addr) || in.wasSeen(m.ID) {
				continue
			}
			full, err := in.Message(ctx, m.ID)
			if err != nil {
				t.Fatalf("read inbox message %s: %v", m.ID, err)
			}
			in.markSeen(m.ID)
			return full
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no new message to %s (%s) in the inbox after %s; %d messages held", recipient, addr, waitTimeout, len(msgs))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitForCode waits for the next message to recipient (see WaitForMessage) and
// returns its 6-digit code, failing the test when the message has none.
func (in *Inbox) WaitForCode(t testing.TB, recipient string) string {
	t.Helper()
	m := in.WaitForMessage(t, recipient)
	code := m.Code()
	if code == "" {
		t.Fatalf("message to %s (%q) carries no 6-digit code:\n%s", recipient, m.Subject, m.Text)
	}
	return code
}

func (in *Inbox) wasSeen(id string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.seen[id]
}

func (in *Inbox) markSeen(id string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.seen[id] = true
}

func containsAddr(list []string, addr string) bool {
	for _, a := range list {
		if a == addr {
			return true
		}
	}
	return false
}
