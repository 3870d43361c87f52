package bybit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// ipLimit and ipSpan are Bybit's IP limit: 600 requests in any 5 s window over all of api.bybit.com (beyond it:
// HTTP 403 and a ban of about ten minutes). The client keeps a margin below it.
const (
	ipLimit = 550
	ipSpan  = 5 * time.Second
)

// limiter keeps at most n requests inside any window of span: it remembers the times of the last n requests and
// lets one more go once the oldest is span old. It also holds an endpoint back until the reset time Bybit named
// when its X-Bapi-Limit-Status reached 0. Waiting honours the context.
type limiter struct {
	mu      sync.Mutex
	sent    []time.Time
	blocked map[string]time.Time // path -> X-Bapi-Limit-Reset-Timestamp while the endpoint's quota is used up
	now     func() time.Time
	n       int
	span    time.Duration
}

func newLimiter() *limiter {
	return &limiter{blocked: map[string]time.Time{}, now: time.Now, n: ipLimit, span: ipSpan}
}

// wait takes one slot for a request to path, sleeping until one is free.
func (l *limiter) wait(ctx context.Context, path string) error {
	for {
		l.mu.Lock()
		now := l.now()
		var until time.Time
		if b, ok := l.blocked[path]; ok {
			if now.Before(b) {
				until = b
			} else {
				delete(l.blocked, path)
			}
		}
		if until.IsZero() && len(l.sent) >= l.n && now.Before(l.sent[len(l.sent)-l.n].Add(l.span)) {
			until = l.sent[len(l.sent)-l.n].Add(l.span)
		}
		if until.IsZero() {
			if len(l.sent) >= l.n {
				l.sent = l.sent[len(l.sent)-l.n+1:]
			}
			l.sent = append(slices.Clip(l.sent), now)
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()
		t := time.NewTimer(until.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// observe reads Bybit's per-endpoint limit headers: when X-Bapi-Limit-Status says nothing is left, the endpoint
// waits for X-Bapi-Limit-Reset-Timestamp (bounded to a minute against a wrong clock).
func (l *limiter) observe(path string, h http.Header) {
	status, reset := h.Get("X-Bapi-Limit-Status"), h.Get("X-Bapi-Limit-Reset-Timestamp")
	if status == "" || reset == "" {
		return
	}
	left, err1 := strconv.Atoi(status)
	at, err2 := strconv.ParseInt(reset, 10, 64)
	if err1 != nil || err2 != nil || left > 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	until := time.UnixMilli(at)
	if maxUntil := l.now().Add(time.Minute); until.After(maxUntil) {
		until = maxUntil
	}
	if len(l.blocked) >= 256 {
		clear(l.blocked)
	}
	l.blocked[path] = until
}

// Client is Bybit's REST client for the public endpoints: the IP limit, the limit headers, and backoff with jitter
// on HTTP 429/403 and retCode 10006/10018. Only reads are sent in this part; every one may be retried.
type Client struct {
	BaseURL string
	HTTP    *http.Client
	Log     *slog.Logger
	// MaxRetries is how many times a rate-limited or busy read is retried with backoff.
	MaxRetries int
	// BaseBackoff is the first retry delay; it doubles each time, with jitter.
	BaseBackoff time.Duration
	lim         *limiter
	// offset is Bybit's clock minus ours (ms), added to X-BAPI-TIMESTAMP; see SyncTime.
	offset atomic.Int64
}

// NewClient builds a client for baseURL.
func NewClient(baseURL string, timeout time.Duration, log *slog.Logger) *Client {
	if log == nil {
		log = slog.Default()
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Timeout: timeout, Transport: t}, Log: log,
		MaxRetries: 3, BaseBackoff: 200 * time.Millisecond, lim: newLimiter()}
}

// Response is a decoded envelope: the result object and Bybit's server time of the answer.
type Response struct {
	Result json.RawMessage
	Time   int64
}

// Get calls a public GET endpoint and returns the envelope's result. Errors are typed contract errors: a retCode
// keeps its raw code and message; a server timeout (UNKNOWN_OUTCOME on writes) is EXCHANGE_UNAVAILABLE on a read.
func (c *Client) Get(ctx context.Context, path string, q url.Values) (Response, error) {
	return c.get(ctx, path, q, nil)
}

// PrivateGet is a signed read (X-BAPI-* headers over the query string); it retries like Get, and once more after
// re-reading Bybit's clock when Bybit says the timestamp is outside the recv window (10002).
func (c *Client) PrivateGet(ctx context.Context, path string, q url.Values, creds *Credentials) (Response, error) {
	res, err := c.get(ctx, path, q, creds)
	if reasonOf(err) == exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW && c.SyncTime(ctx) == nil {
		res, err = c.get(ctx, path, q, creds)
	}
	return res, err
}

// Write sends a signed POST with a JSON body exactly once: a change to orders, positions or settings is never
// repeated blindly. An answer that is lost after the request may have reached Bybit (a broken connection, a
// timeout, HTTP 5xx without an envelope, retCode 10000/10016) is UNKNOWN_OUTCOME, which the caller resolves by
// reading (orders: by orderLinkId). A request refused before Bybit looked at it (connection refused, 10002 clock
// skew, 10006 rate limit) did nothing; only 10002 is sent again, once, after re-reading Bybit's clock.
func (c *Client) Write(ctx context.Context, path string, body any, creds *Credentials) (Response, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return Response{}, internalf("encode %s: %v", path, err)
	}
	for attempt := 0; ; attempt++ {
		if err := c.lim.wait(ctx, limitKey(path, creds)); err != nil {
			return Response{}, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s: %v", path, err)
		}
		res, retryAfter, sent, err := c.once(ctx, http.MethodPost, limitKey(path, creds), path, string(raw), creds)
		if err == nil {
			return res, nil
		}
		switch reasonOf(err) {
		case exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW:
			if attempt == 0 && c.SyncTime(ctx) == nil {
				continue
			}
		case exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED:
			var se *sdk.Error
			if errors.As(err, &se) && se.Detail.RetryAfterMs == 0 {
				se.Detail.RetryAfterMs = max(retryAfter, time.Second).Milliseconds()
			}
		case exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, exchangev1.ErrorReason_ERROR_REASON_INTERNAL:
			if sent {
				// An answer that came back broken (unreadable, HTTP 5xx without an envelope): the request arrived.
				return Response{}, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
					"POST %s: no usable answer, the request may have executed: %s", path, sdk.MessageOf(err))
			}
		}
		return Response{}, err
	}
}

// notSent reports whether a transport error happened before the request could reach Bybit (no connection).
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// SyncTime reads Bybit's clock and keeps its offset from ours for X-BAPI-TIMESTAMP.
func (c *Client) SyncTime(ctx context.Context) error {
	before := time.Now()
	res, err := c.get(ctx, pathMarketTime, nil, nil)
	if err != nil {
		return err
	}
	ts, err := ParseTime(res.Result)
	if err != nil {
		return err
	}
	mid := before.Add(time.Since(before) / 2)
	c.offset.Store(ts - mid.UnixMilli())
	return nil
}

func (c *Client) get(ctx context.Context, path string, q url.Values, creds *Credentials) (Response, error) {
	reqPath := path
	if len(q) > 0 {
		reqPath += "?" + q.Encode()
	}
	backoff := c.BaseBackoff
	for attempt := 0; ; attempt++ {
		if err := c.lim.wait(ctx, limitKey(path, creds)); err != nil {
			return Response{}, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s: %v", path, err)
		}
		res, retryAfter, _, err := c.once(ctx, http.MethodGet, limitKey(path, creds), reqPath, "", creds)
		if err == nil {
			return res, nil
		}
		var se *sdk.Error
		if errors.As(err, &se) && se.Detail.GetReason() == exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
			// A read that timed out at Bybit changed nothing.
			se.Detail.Reason = exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE
		}
		reason := reasonOf(err)
		retryable := reason == exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED || reason == exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE
		if !retryable || attempt >= c.MaxRetries || ctx.Err() != nil {
			if se != nil && reason == exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED && se.Detail.RetryAfterMs == 0 {
				se.Detail.RetryAfterMs = max(retryAfter, backoff).Milliseconds()
			}
			return Response{}, err
		}
		wait := max(retryAfter, backoff) + time.Duration(rand.Int64N(int64(backoff)/2+1))
		c.Log.Warn("bybit: retrying", "path", path, "attempt", attempt+1, "wait", wait, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{}, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s: %v", path, ctx.Err())
		case <-t.C:
		}
		backoff *= 2
	}
}

// limitKey names what Bybit's X-Bapi-Limit headers count: an endpoint, per API key (per UID) on private calls.
func limitKey(path string, creds *Credentials) string {
	if creds == nil {
		return path
	}
	return path + "|" + creds.APIKey
}

// once sends one request; limKey is where the answer's limit headers are kept (limitKey).
func (c *Client) once(ctx context.Context, method, limKey, reqPath, body string, creds *Credentials) (res Response, retry time.Duration, sent bool, err error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+reqPath, rd)
	if err != nil {
		return Response{}, 0, false, internalf("build request: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if creds != nil {
		payload := body
		if method == http.MethodGet {
			_, payload, _ = strings.Cut(reqPath, "?")
		}
		ts := strconv.FormatInt(time.Now().UnixMilli()+c.offset.Load(), 10)
		rw := strconv.Itoa(defaultRecvWindow)
		req.Header.Set("X-BAPI-API-KEY", creds.APIKey)
		req.Header.Set("X-BAPI-TIMESTAMP", ts)
		req.Header.Set("X-BAPI-RECV-WINDOW", rw)
		req.Header.Set("X-BAPI-SIGN", Sign(creds.Secret, ts, creds.APIKey, rw, payload))
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if method != http.MethodGet && !notSent(err) {
			return Response{}, 0, true, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
				"%s %s: the answer was lost, the request may have executed: %v", method, reqPath, err)
		}
		return Response{}, 0, !notSent(err), sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s %s: %v", method, reqPath, err)
	}
	defer resp.Body.Close()
	c.lim.observe(limKey, resp.Header)
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return Response{}, 0, true, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s %s: read: %v", method, reqPath, err)
	}
	var retryAfter time.Duration
	if s := resp.Header.Get("X-Bapi-Limit-Reset-Timestamp"); s != "" {
		if at, err := strconv.ParseInt(s, 10, 64); err == nil {
			retryAfter = min(max(time.Until(time.UnixMilli(at)), 0), time.Minute)
		}
	}
	switch resp.StatusCode {
	case http.StatusForbidden, http.StatusTooManyRequests:
		// Bybit answers an IP over its limit with 403 (and bans it for a while) without an envelope.
		if _, perr := ParseEnvelope(raw); perr != nil && reasonOf(perr) == exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED {
			return Response{}, retryAfter, true, perr
		}
		return Response{}, max(retryAfter, time.Second), true, sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED,
			strconv.Itoa(resp.StatusCode), "HTTP "+strconv.Itoa(resp.StatusCode)+": access too frequent")
	}
	res, perr := ParseEnvelope(raw)
	if perr != nil {
		var se *sdk.Error
		if errors.As(perr, &se) {
			return Response{}, retryAfter, true, perr
		}
		if resp.StatusCode >= 500 {
			return Response{}, retryAfter, true, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s %s: HTTP %d: %v", method, reqPath, resp.StatusCode, perr)
		}
		return Response{}, 0, true, internalf("%s %s: HTTP %d: %v", method, reqPath, resp.StatusCode, perr)
	}
	if resp.StatusCode >= 300 {
		return Response{}, 0, true, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s %s: HTTP %d with a success body", method, reqPath, resp.StatusCode)
	}
	return res, 0, true, nil
}

func reasonOf(err error) exchangev1.ErrorReason {
	var se *sdk.Error
	if errors.As(err, &se) {
		return se.Detail.GetReason()
	}
	return exchangev1.ErrorReason_ERROR_REASON_UNSPECIFIED
}

// errMalformed marks an answer that does not have Bybit's shape.
var errMalformed = errors.New("bybit: malformed response")

// envelope is Bybit's REST response: {"retCode":0,"retMsg":"OK","result":{...},"retExtInfo":{},"time":ms}.
type envelope struct {
	RetCode *int64          `json:"retCode"`
	RetMsg  string          `json:"retMsg"`
	Result  json.RawMessage `json:"result"`
	Time    int64           `json:"time"`
}

// ParseEnvelope checks a REST answer: a retCode other than 0 is the typed error of that code (raw code and message
// kept); an answer without a retCode or without a result object is malformed.
func ParseEnvelope(raw []byte) (Response, error) {
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return Response{}, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if env.RetCode == nil {
		return Response{}, fmt.Errorf("%w: no retCode", errMalformed)
	}
	if *env.RetCode != 0 {
		return Response{}, apiError(*env.RetCode, env.RetMsg)
	}
	if len(env.Result) == 0 || env.Result[0] != '{' {
		return Response{}, fmt.Errorf("%w: result is not an object", errMalformed)
	}
	return Response{Result: env.Result, Time: env.Time}, nil
}
