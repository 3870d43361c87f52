package emulator

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/adapters/venue"
	"github.com/exhub/exhub/plugin-sdk/faults"
)

// The demo key: demo mode and tests sign with it; its account is funded from the venue's faucet.
const (
	DemoAPIKey    = "bybit-demo-key-5d2e81c4"
	DemoAPISecret = "bybit-demo-secret-9a4f6c03e1b7d825"
	// DemoAccount is the venue account id behind the demo key.
	DemoAccount = "bybit-demo"
)

// Credentials is one HMAC API key of a venue account (a unified trading account).
type Credentials struct {
	APIKey string
	Secret string
	// Account is the venue account id; it is created when missing.
	Account string
	// ReadOnly keys read but may not trade (10005 on every POST).
	ReadOnly bool
}

// maxRecvWindow is the largest X-BAPI-RECV-WINDOW Bybit takes (ms); its default is 5000.
const (
	defaultRecvWindow = 5000
	maxRecvWindow     = 60000
)

// keyring holds the API keys.
type keyring struct {
	mu   sync.RWMutex
	keys map[string]Credentials
}

func (k *keyring) add(c Credentials) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys[c.APIKey] = c
}

func (k *keyring) get(key string) (Credentials, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	c, ok := k.keys[key]
	return c, ok
}

// setupKeys creates the accounts of the configured keys and funds the demo account.
func (s *Server) setupKeys() error {
	creds := append([]Credentials{{APIKey: DemoAPIKey, Secret: DemoAPISecret, Account: DemoAccount}}, s.cfg.Credentials...)
	for _, c := range creds {
		if c.APIKey == "" || c.Secret == "" || c.Account == "" {
			return fmt.Errorf("bybit emulator: credentials need APIKey, Secret and Account")
		}
		fresh := s.v.CreateAccount(c.Account) == nil
		s.keys.add(c)
		if fresh && c.APIKey == DemoAPIKey && !s.cfg.NoDemoFunding {
			if err := s.fundDemo(c.Account); err != nil {
				return fmt.Errorf("bybit emulator: fund demo account: %w", err)
			}
		}
	}
	return nil
}

// fundDemo deposits the faucet amounts and moves them into the trading wallet (Bybit's unified account trades
// from one wallet).
func (s *Server) fundDemo(acct string) error {
	ctx := context.Background()
	for _, a := range []string{"USDT", "USDT", "BTC", "ETH"} {
		if _, ok := s.v.Assets()[a]; !ok {
			continue
		}
		if _, err := s.v.Deposit(ctx, acct, a, decimal.Zero); err != nil {
			return err
		}
	}
	bs, err := s.v.Balances(acct, venue.Funding)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if b.Free.IsPositive() {
			if _, err := s.v.Transfer(ctx, acct, b.Asset, b.Free, venue.Funding, venue.TradingWallet); err != nil {
				return err
			}
		}
	}
	return nil
}

// Sign computes Bybit's v5 signature: hex(HMAC-SHA256(secret, timestamp + apiKey + recvWindow + payload)), the
// payload being the query string of a GET or the raw body of a POST. Exported for tests and tools.
func Sign(secret, timestamp, apiKey, recvWindow, payload string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp + apiKey + recvWindow + payload))
	return hex.EncodeToString(m.Sum(nil))
}

// authenticate checks the X-BAPI-* headers the way Bybit does: every header present (10001 otherwise), the
// timestamp within [server time - recv window, server time + 1 s) (10002), a known key (10003) and the signature
// (10004).
func (s *Server) authenticate(r *http.Request, body []byte) (Credentials, *apiError) {
	h := r.Header
	key, ts, sign := h.Get("X-BAPI-API-KEY"), h.Get("X-BAPI-TIMESTAMP"), h.Get("X-BAPI-SIGN")
	if key == "" || ts == "" || sign == "" {
		return Credentials{}, &apiError{10001, fmt.Sprintf("empty value: apiTimestamp[%s] apiKey[%s] apiSignature[%s]: openapi sign params error!", ts, key, sign)}
	}
	rwStr := h.Get("X-BAPI-RECV-WINDOW")
	rw := int64(defaultRecvWindow)
	if rwStr != "" {
		n, err := strconv.ParseInt(rwStr, 10, 64)
		if err != nil || n <= 0 || n > maxRecvWindow {
			return Credentials{}, &apiError{10001, "params error: recv_window " + rwStr + " is invalid"}
		}
		rw = n
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return Credentials{}, &apiError{10002, "invalid request, please check your server timestamp or recv_window param. req_timestamp[" + ts + "]"}
	}
	now := s.v.Now()
	if t < now-rw || t >= now+1000 {
		return Credentials{}, &apiError{10002, fmt.Sprintf("invalid request, please check your server timestamp or recv_window param. req_timestamp[%d],server_timestamp[%d],recv_window[%d]", t, now, rw)}
	}
	c, ok := s.keys.get(key)
	if !ok {
		return Credentials{}, &apiError{10003, "API key is invalid."}
	}
	payload := string(body)
	if r.Method == http.MethodGet {
		payload = r.URL.RawQuery
	}
	want := Sign(c.Secret, ts, key, rwStr, payload)
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(sign))) {
		return Credentials{}, &apiError{10004, "error sign! origin_string[" + ts + key + rwStr + payload + "]"}
	}
	return c, nil
}

// privRequest is what a private handler sees.
type privRequest struct {
	r     *http.Request
	q     url.Values
	body  []byte
	cred  Credentials
	fault faults.Kind
}

func (q *privRequest) get(name string) string { return strings.TrimSpace(q.q.Get(name)) }

func (q *privRequest) account() string { return q.cred.Account }

// take uses up the fault armed for one of the request's client ids (orderLinkId). It reports true when the
// request must not run (drop_before).
func (s *Server) take(q *privRequest, ids ...string) bool {
	for _, id := range ids {
		if k, ok := s.faults.Take(id); ok {
			q.fault = k
			break
		}
	}
	return q.fault == faults.DropBefore
}

type privHandler func(q *privRequest) (any, *apiError)

// uidLimit is Bybit's per-UID limit of one endpoint: requests per second.
type uidLimit struct {
	mu     sync.Mutex
	second int64
	counts map[string]int
}

func (l *uidLimit) take(key string, limit int, now time.Time) (left int, reset int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sec := now.Unix()
	if sec != l.second {
		l.second = sec
		clear(l.counts)
	}
	l.counts[key]++
	return limit - l.counts[key], (sec + 1) * 1000
}

// private registers a signed endpoint with its per-UID limit per second. A fault armed for the request's client
// id answers retCode 10000 (Bybit's server timeout: the outcome is unknown) after executing, or drops the
// connection before or after executing.
func (s *Server) private(method, path string, limit int, h privHandler) {
	s.mux.HandleFunc(method+" "+path, func(w http.ResponseWriter, r *http.Request) {
		if !s.limits.allow(clientIP(r), s.limits.now()) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("access too frequent"))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			s.writeJSON(w, http.StatusOK, s.envelope(10001, "params error: body can not be read", obj{}))
			return
		}
		cred, aerr := s.authenticate(r, body)
		if aerr != nil {
			s.writeJSON(w, http.StatusOK, s.envelope(aerr.code, aerr.msg, nil))
			return
		}
		if method == http.MethodPost && cred.ReadOnly {
			s.writeJSON(w, http.StatusOK, s.envelope(10005, "Permission denied, please check your API key permissions.", nil))
			return
		}
		left, reset := s.uid.take(cred.Account+"|"+path, limit, time.Now())
		w.Header().Set("X-Bapi-Limit", strconv.Itoa(limit))
		w.Header().Set("X-Bapi-Limit-Status", strconv.Itoa(max(left, 0)))
		w.Header().Set("X-Bapi-Limit-Reset-Timestamp", strconv.FormatInt(reset, 10))
		if left < 0 && !s.cfg.DisableRateLimits {
			s.writeJSON(w, http.StatusOK, s.envelope(10006, "Too many visits. Exceeded the API Rate Limit.", nil))
			return
		}
		q := &privRequest{r: r, q: r.URL.Query(), body: body, cred: cred}
		res, aerr := h(q)
		switch q.fault {
		case faults.DropBefore, faults.AcceptThenDrop:
			faults.Drop(w)
			return
		case faults.AcceptThenError:
			s.writeJSON(w, http.StatusOK, s.envelope(10000, "Server Timeout", nil))
			return
		}
		if aerr != nil {
			s.writeJSON(w, http.StatusOK, s.envelope(aerr.code, aerr.msg, nil))
			return
		}
		s.writeJSON(w, http.StatusOK, s.envelope(0, "OK", res))
	})
}
