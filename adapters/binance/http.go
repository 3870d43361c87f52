package binance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

type authMode int

const (
	authNone   authMode = iota
	authAPIKey          // X-MBX-APIKEY header only (listenKey)
	authSigned          // header + timestamp + recvWindow + signature
)

// RESTClient calls Binance's REST APIs with weight limiting, signing and error mapping.
type RESTClient struct {
	hc         *http.Client
	endpoints  Endpoints
	recvWindow time.Duration
	log        *slog.Logger
	limiters   map[Market]*weightLimiter
	now        func() time.Time

	mu      sync.Mutex
	offsets map[Market]time.Duration // server time minus local time
	synced  map[Market]bool
}

// pooledTransport is Go's default transport keeping up to 64 idle connections per host (the default keeps 2): the
// order path's concurrent calls reuse their connections instead of opening a new one per call (and leaving it in
// TIME_WAIT).
func pooledTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return t
}

// NewRESTClient builds a client; limits start at Binance's documented defaults until exchangeInfo says otherwise.
func NewRESTClient(ep Endpoints, timeout, recvWindow time.Duration, log *slog.Logger) *RESTClient {
	if log == nil {
		log = slog.Default()
	}
	return &RESTClient{
		hc: &http.Client{Timeout: timeout, Transport: pooledTransport()}, endpoints: ep, recvWindow: recvWindow, log: log, now: time.Now,
		limiters: map[Market]*weightLimiter{Spot: newWeightLimiter(6000), Futures: newWeightLimiter(2400)},
		offsets:  map[Market]time.Duration{}, synced: map[Market]bool{},
	}
}

// ApplyRateLimits sets the REQUEST_WEIGHT budget of a market from exchangeInfo.rateLimits.
func (c *RESTClient) ApplyRateLimits(m Market, rls []RateLimit) {
	for _, r := range rls {
		if r.Type == "REQUEST_WEIGHT" && r.Interval == "MINUTE" && (r.IntervalNum == 1 || r.IntervalNum == 0) {
			c.limiters[m].setLimit(int(r.Limit))
		}
	}
}

// rest names one REST call: market, method, path, parameters, weight and, for a SIGNED call, the account.
type rest struct {
	m      Market
	method string
	path   string
	q      url.Values
	weight int
	acct   *exchangev1.AccountRef // nil: a public call
	what   string                 // names the answer in errors ("capital config")
}

// call runs an idempotent call (public, or SIGNED for r.acct) and turns its answer into T: with parse, or as JSON
// when parse is nil. Call errors come back as they are; an answer that does not parse is EXCHANGE_UNAVAILABLE.
func call[T any](ctx context.Context, c *RESTClient, r rest, parse func([]byte) (T, error)) (T, error) {
	var body []byte
	var err error
	if r.acct == nil {
		body, err = c.get(ctx, r.m, r.path, r.q, r.weight)
	} else {
		body, err = c.signed(ctx, r.m, r.method, r.path, r.q, r.weight, creds(r.acct))
	}
	return answer(body, err, r.what, parse)
}

// writeCall is call for a SIGNED call that must not be repeated blindly (see RESTClient.write).
func writeCall[T any](ctx context.Context, c *RESTClient, r rest, parse func([]byte) (T, error)) (T, error) {
	body, err := c.write(ctx, r.m, r.method, r.path, r.q, r.weight, creds(r.acct))
	return answer(body, err, r.what, parse)
}

func answer[T any](body []byte, err error, what string, parse func([]byte) (T, error)) (T, error) {
	var out T
	if err != nil {
		return out, err
	}
	if parse == nil {
		err = decodeJSON(body, &out, what)
	} else {
		out, err = parse(body)
	}
	if err != nil {
		var zero T
		return zero, parseErr(what, err)
	}
	return out, nil
}

// one checks that a parser found exactly one row (an answer about one symbol).
func one[T any](rows []T, err error) ([]T, error) {
	if err == nil && len(rows) != 1 {
		err = fmt.Errorf("%d rows, want 1", len(rows))
	}
	return rows, err
}

// inMarket binds a parser's market.
func inMarket[T any](m Market, parse func(Market, []byte) (T, error)) func([]byte) (T, error) {
	return func(b []byte) (T, error) { return parse(m, b) }
}

// get is a public GET.
func (c *RESTClient) get(ctx context.Context, m Market, path string, q url.Values, weight int) ([]byte, error) {
	return c.do(ctx, m, http.MethodGet, path, q, weight, authNone, Credentials{})
}

// signed is a SIGNED call.
func (c *RESTClient) signed(ctx context.Context, m Market, method, path string, q url.Values, weight int, cr Credentials) ([]byte, error) {
	return c.do(ctx, m, method, path, q, weight, authSigned, cr)
}

// write is a SIGNED call that changes state and must not be repeated blindly (orders, transfers, withdrawals,
// converts): a transport failure after the request went out, a 5xx without Binance's JSON error, or Binance's own
// "execution status unknown" codes (-1006, -1007) answer ERROR_REASON_UNKNOWN_OUTCOME, and nothing is retried.
func (c *RESTClient) write(ctx context.Context, m Market, method, path string, q url.Values, weight int, cr Credentials) ([]byte, error) {
	return c.call(ctx, m, method, path, q, weight, authSigned, cr, false)
}

// keyed is an API-key-only call (USER_STREAM: listen keys).
func (c *RESTClient) keyed(ctx context.Context, m Market, method, path string, q url.Values, weight int, cr Credentials) ([]byte, error) {
	return c.do(ctx, m, method, path, q, weight, authAPIKey, cr)
}

func (c *RESTClient) do(ctx context.Context, m Market, method, path string, q url.Values, weight int, mode authMode, cr Credentials) ([]byte, error) {
	return c.call(ctx, m, method, path, q, weight, mode, cr, true)
}

// call runs one REST call. idempotent says whether the call may be repeated without harm: only then is a failure
// after sending EXCHANGE_UNAVAILABLE; otherwise it is UNKNOWN_OUTCOME. The one repeat made here (after -1021, which
// Binance answers without executing) is safe for both.
func (c *RESTClient) call(ctx context.Context, m Market, method, path string, q url.Values, weight int, mode authMode, cr Credentials, idempotent bool) ([]byte, error) {
	if q == nil {
		q = url.Values{}
	}
	if mode != authNone && !cr.Valid() && !(mode == authAPIKey && cr.APIKey != "") {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "binance: an API key and secret are required")
	}
	if mode == authSigned {
		if err := c.syncTime(ctx, m, false); err != nil {
			return nil, err
		}
	}
	body, err := c.once(ctx, m, method, path, q, weight, mode, cr, idempotent)
	var se *sdk.Error
	if mode == authSigned && errors.As(err, &se) && se.Detail.GetExchangeCode() == "-1021" {
		// Timestamp outside recvWindow: our clock drifted from Binance's. Re-measure and try once more.
		if serr := c.syncTime(ctx, m, true); serr != nil {
			return nil, serr
		}
		body, err = c.once(ctx, m, method, path, q, weight, mode, cr, idempotent)
	}
	return body, err
}

func (c *RESTClient) once(ctx context.Context, m Market, method, path string, q url.Values, weight int, mode authMode, cr Credentials, idempotent bool) ([]byte, error) {
	lim := c.limiters[m]
	if err := lim.acquire(ctx, weight); err != nil {
		return nil, err
	}
	params := cloneValues(q)
	raw := params.Encode()
	if mode == authSigned {
		params.Set("timestamp", strconv.FormatInt(c.serverNow(m).UnixMilli(), 10))
		params.Set("recvWindow", strconv.FormatInt(c.recvWindow.Milliseconds(), 10))
		raw = params.Encode()
		raw += "&signature=" + Sign(cr.APISecret, raw)
	}
	u := c.endpoints.rest(m) + path
	if raw != "" {
		u += "?" + raw
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "binance: build request: %v", err)
	}
	req.Header.Set("User-Agent", userAgent)
	if mode != authNone {
		req.Header.Set(headerAPIKey, cr.APIKey)
	}
	// sent turns true once the request's bytes went out: from then on Binance may have executed it.
	var sent atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { sent.Store(true) },
		WroteRequest: func(httptrace.WroteRequestInfo) { sent.Store(true) },
	}))
	resp, err := c.hc.Do(req)
	if err != nil {
		if !idempotent && sent.Load() {
			return nil, unknownOutcome(method, path, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "binance %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		if !idempotent {
			return nil, unknownOutcome(method, path, fmt.Errorf("read body (http %d): %w", resp.StatusCode, err))
		}
		return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "binance %s %s: read body: %v", method, path, err)
	}
	if s := resp.Header.Get(headerUsedWeight); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			lim.observe(n)
		}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return body, nil
	}
	ae := parseAPIError(resp.StatusCode, body, resp.Header)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusTeapot {
		lim.ban(ae.RetryAfter)
		c.log.Warn("binance rate limited", "market", m.String(), "status", resp.StatusCode, "retry_after", ae.RetryAfter.String())
	}
	se := ae.ToSDK()
	switch r := se.Detail.GetReason(); {
	case r == exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME && idempotent:
		// A read that timed out inside Binance has no outcome to resolve: it simply failed.
		se.Detail.Reason = exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE
	case !idempotent && resp.StatusCode >= 500 && ae.Code == 0:
		// Binance: a 5xx means the execution status is UNKNOWN; without its JSON error nothing says otherwise.
		se.Detail.Reason = exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME
	}
	return nil, se
}

// unknownOutcome is the error of a non-idempotent call whose answer was lost after the request was sent.
func unknownOutcome(method, path string, err error) error {
	return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,
		"binance %s %s: the request was sent but no answer arrived, it may have executed (resolve by client id): %v", method, path, err)
}

func cloneValues(q url.Values) url.Values {
	out := make(url.Values, len(q)+3)
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

func (c *RESTClient) serverNow(m Market) time.Time {
	c.mu.Lock()
	off := c.offsets[m]
	c.mu.Unlock()
	return c.now().Add(off)
}

// syncTime measures the offset between Binance's clock and ours (half the round trip as latency).
func (c *RESTClient) syncTime(ctx context.Context, m Market, force bool) error {
	c.mu.Lock()
	done := c.synced[m]
	c.mu.Unlock()
	if done && !force {
		return nil
	}
	path := pathSpotTime
	if m == Futures {
		path = pathFutTime
	}
	t0 := c.now()
	body, err := c.once(ctx, m, http.MethodGet, path, nil, 1, authNone, Credentials{}, true)
	if err != nil {
		return err
	}
	t1 := c.now()
	st, err := ParseServerTime(body)
	if err != nil {
		return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "binance server time: %v", err)
	}
	mid := t0.Add(t1.Sub(t0) / 2)
	c.mu.Lock()
	c.offsets[m] = time.UnixMilli(st).Sub(mid)
	c.synced[m] = true
	c.mu.Unlock()
	return nil
}

// parseErr wraps a parser failure on a 2xx body: Binance answered something we cannot read.
func parseErr(what string, err error) error {
	return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "binance %s: unreadable answer: %v", what, err)
}

var _ = fmt.Sprintf
