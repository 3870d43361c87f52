package okx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
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

// endpointLimits are OKX's documented request limits per endpoint, in requests per 2 seconds. Public endpoints
// count per IP, private ones per account (the limiter key includes the API key).
var endpointLimits = map[string]int{
	pathPublicInstruments:                       20,
	pathMarketTickers:                           20,
	pathMarketTicker:                            20,
	pathPublicMarkPrice:                         10,
	pathMarketIndexTickers:                      20,
	pathPublicFundingRate:                       20,
	pathPublicFundingRateHistory:                10,
	pathMarketBooks:                             40,
	pathMarketCandles:                           40,
	pathMarketHistoryCandles:                    20,
	pathMarketTrades:                            100,
	pathPublicTime:                              10,
	pathPublicOpenInterest:                      20,
	pathRubikStatContractsLongShortAccountRatio: 5,
	pathRubikStatTakerVolume:                    5,
	pathRubikStatContractsOpenInterestVolume:    5,
	pathRubikStatContractsOpenInterestHistory:   5,
	pathTradeOrder:                              60,
	pathTradeBatchOrders:                        300,
	pathTradeCancelOrder:                        60,
	pathTradeCancelBatchOrders:                  300,
	pathTradeAmendOrder:                         60,
	pathTradeOrdersPending:                      60,
	pathTradeOrdersHistory:                      40,
	pathTradeFills:                              60,
	pathTradeOrderAlgo:                          20,
	pathTradeCancelAlgos:                        20,
	pathTradeOrdersAlgoPending:                  20,
	pathTradeOrdersAlgoHistory:                  20,
	pathTradeClosePosition:                      20,
	pathAccountPositions:                        10,
	pathAccountBalance:                          10,
	pathAccountConfig:                           5,
	pathAccountSetPositionMode:                  5,
	pathAccountSetLeverage:                      20,
	pathAccountLeverageInfo:                     20,
	pathAccountMaxSize:                          20,
	pathAssetBalances:                           6,
	pathAssetTransfer:                           2,
	pathAssetTransferState:                      10,
	pathAssetBills:                              6,
	pathAssetCurrencies:                         6,
	pathAssetDepositAddress:                     6,
	pathAssetDepositHistory:                     6,
	pathAssetWithdrawal:                         6,
	pathAssetWithdrawalHistory:                  6,
	pathAssetConvertEstimateQuote:               10,
	pathAssetConvertTrade:                       10,
	pathAssetConvertHistory:                     6,
}

const defaultLimit = 10

// nonIdempotent are the calls that change something each time they run: orders, algo orders, closing a position,
// transfers, withdrawals and converts. They are never retried here, and a request that may have reached OKX without
// a readable answer is ERROR_REASON_UNKNOWN_OUTCOME: the caller resolves it by client id.
var nonIdempotent = map[string]bool{
	pathTradeOrder:         true,
	pathTradeBatchOrders:   true,
	pathTradeOrderAlgo:     true,
	pathTradeClosePosition: true,
	// An amend may change the order again when repeated; a lost cancel is asked again only by a caller that reads the
	// "filled, cancelled or does not exist" answer right (Server.CancelOrder).
	pathTradeAmendOrder:  true,
	pathTradeCancelOrder: true,
	// Likewise a lost batch cancel (Server.cancelBatch asks once more and reads the orders no longer open).
	pathTradeCancelBatchOrders: true,
	pathAssetTransfer:          true,
	pathAssetWithdrawal:        true,
	pathAssetConvertTrade:      true,
	// A sub-account is found by name afterwards; a key's secret is in its answer only.
	pathBrokerCreateSubAccount: true,
	pathBrokerSubAccountAPIKey: true,
}

// isNonIdempotent reports whether a call must not be repeated blindly.
func isNonIdempotent(method, path string) bool {
	return method != http.MethodGet && nonIdempotent[path]
}

// limiter keeps at most n requests per key inside any window of limitSpan (OKX: "n requests per 2 seconds"),
// whether OKX counts in fixed or sliding windows: it remembers the times of the last n requests of each key and
// lets one more go once the oldest is limitSpan old. Waiting honours the context.
type limiter struct {
	mu    sync.Mutex
	sent  map[string][]time.Time // per key, the last n send times, oldest first
	now   func() time.Time
	slack time.Duration // added to the span: requests reach OKX a little after they leave
}

// limitSpan is OKX's rate limit window.
const limitSpan = 2 * time.Second

func newLimiter() *limiter {
	return &limiter{sent: map[string][]time.Time{}, now: time.Now, slack: 50 * time.Millisecond}
}

// wait takes one slot for key, sleeping until one is free.
func (l *limiter) wait(ctx context.Context, key string, n int) error {
	for {
		l.mu.Lock()
		now := l.now()
		ts, ok := l.sent[key]
		if !ok && len(l.sent) >= 4096 { // bounded: forget every key's history rather than grow
			clear(l.sent)
		}
		if len(ts) < n || !now.Before(ts[len(ts)-n].Add(limitSpan+l.slack)) {
			if len(ts) >= n {
				ts = ts[len(ts)-n+1:]
			}
			l.sent[key] = append(slices.Clip(ts), now)
			l.mu.Unlock()
			return nil
		}
		wait := ts[len(ts)-n].Add(limitSpan + l.slack).Sub(now)
		l.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Client is OKX's REST client: signing, per-endpoint rate limits, and backoff on 429 / 50011.
type Client struct {
	BaseURL   string
	HTTP      *http.Client
	Log       *slog.Logger
	Simulated bool
	// MaxRetries is how many times a rate-limited or busy call is retried with backoff.
	MaxRetries int
	// BaseBackoff is the first retry delay; it doubles each time, with jitter.
	BaseBackoff time.Duration
	now         func() time.Time
	lim         *limiter
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

// NewClient builds a client for baseURL.
func NewClient(baseURL string, timeout time.Duration, log *slog.Logger) *Client {
	if log == nil {
		log = slog.Default()
	}
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Timeout: timeout, Transport: pooledTransport()}, Log: log,
		MaxRetries: 3, BaseBackoff: 200 * time.Millisecond, now: time.Now, lim: newLimiter()}
}

// Get calls a GET endpoint; creds nil for public endpoints.
func (c *Client) Get(ctx context.Context, path string, q url.Values, creds *Credentials) (json.RawMessage, error) {
	return c.Do(ctx, http.MethodGet, path, q, nil, creds)
}

// Post calls a POST endpoint with a JSON body.
func (c *Client) Post(ctx context.Context, path string, body any, creds *Credentials) (json.RawMessage, error) {
	return c.Do(ctx, http.MethodPost, path, nil, body, creds)
}

// Do sends one request and returns the envelope's data. Errors are typed contract errors.
func (c *Client) Do(ctx context.Context, method, path string, q url.Values, body any, creds *Credentials) (json.RawMessage, error) {
	return c.do(ctx, method, path, q, body, creds, false, isNonIdempotent(method, path))
}

// Write sends a non-idempotent POST exactly once: never retried, and a failure after the request left is
// UNKNOWN_OUTCOME.
func (c *Client) Write(ctx context.Context, path string, body any, creds *Credentials) (json.RawMessage, error) {
	return c.do(ctx, http.MethodPost, path, nil, body, creds, false, true)
}

// PostBatch sends a batch endpoint's request (batch-orders, cancel-batch-orders) and returns its per-item data
// also when OKX answers code "1" (every item failed) or "2" (some failed): each item's sCode/sMsg says how it went.
func (c *Client) PostBatch(ctx context.Context, path string, body any, creds *Credentials) (json.RawMessage, error) {
	return c.do(ctx, http.MethodPost, path, nil, body, creds, true, isNonIdempotent(http.MethodPost, path))
}

func (c *Client) do(ctx context.Context, method, path string, q url.Values, body any, creds *Credentials, batch, unsafe bool) (json.RawMessage, error) {
	reqPath := path
	if len(q) > 0 {
		reqPath += "?" + q.Encode()
	}
	var bodyStr string
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("okx: encode %s body: %w", path, err)
		}
		bodyStr = string(b)
	}
	key := path
	if creds != nil {
		if !creds.Valid() {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "OKX needs an API key, secret and passphrase")
		}
		key = creds.APIKey + " " + path
	}
	n, ok := endpointLimits[path]
	if !ok {
		n = defaultLimit
	}
	backoff := c.BaseBackoff
	for attempt := 0; ; attempt++ {
		if err := c.lim.wait(ctx, key, n); err != nil {
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s: %v", path, err)
		}
		data, retryAfter, err := c.once(ctx, method, reqPath, bodyStr, creds, unsafe, batch)
		if err == nil {
			return data, nil
		}
		var se *sdk.Error
		if errors.As(err, &se) && !unsafe && se.Detail.GetReason() == exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME {
			// A read or a cancel that timed out at OKX changed nothing that cannot be read again.
			se.Detail.Reason = exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE
		}
		retryable := se != nil && (se.Detail.GetReason() == exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED ||
			se.Detail.GetExchangeCode() == "50001" || se.Detail.GetExchangeCode() == "50013" || se.Detail.GetExchangeCode() == "50004")
		// Only idempotent calls are retried after a busy answer, and only reads after a busy one; a non-idempotent
		// call is never sent twice.
		if !retryable || unsafe || attempt >= c.MaxRetries || (method != http.MethodGet && se.Detail.GetReason() != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED) {
			if se != nil && se.Detail.GetReason() == exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED && se.Detail.RetryAfterMs == 0 {
				se.Detail.RetryAfterMs = max(retryAfter, backoff).Milliseconds()
			}
			return nil, err
		}
		wait := max(retryAfter, backoff) + time.Duration(rand.Int64N(int64(backoff)/2+1))
		c.Log.Warn("okx: retrying", "path", path, "attempt", attempt+1, "wait", wait, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s: %v", path, ctx.Err())
		case <-t.C:
		}
		backoff *= 2
	}
}

// once sends one request. unsafe (a non-idempotent call) turns every failure after the request left into
// ERROR_REASON_UNKNOWN_OUTCOME: a timeout, a reset or EOF before the answer, an unreadable or non-JSON answer.
func (c *Client) once(ctx context.Context, method, reqPath, body string, creds *Credentials, unsafe, batch bool) (json.RawMessage, time.Duration, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+reqPath, rd)
	if err != nil {
		return nil, 0, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "build request: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Simulated {
		req.Header.Set("x-simulated-trading", "1")
	}
	if creds != nil {
		ts := RESTTimestamp(c.now())
		req.Header.Set("OK-ACCESS-KEY", creds.APIKey)
		req.Header.Set("OK-ACCESS-SIGN", Sign(creds.Secret, ts, method, reqPath, body))
		req.Header.Set("OK-ACCESS-TIMESTAMP", ts)
		req.Header.Set("OK-ACCESS-PASSPHRASE", creds.Passphrase)
	}
	var sent atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { sent.Store(true) },
	}))
	lost := func(format string, args ...any) error {
		reason := exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE
		if unsafe {
			reason = exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME
		}
		return sdk.Errorf(reason, "%s %s: "+format, append([]any{method, reqPath}, args...)...)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		if !sent.Load() || notSent(err) {
			return nil, 0, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s %s: %v", method, reqPath, err)
		}
		return nil, 0, lost("%v (the request was sent; its outcome is unknown)", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, 0, lost("read: %v", err)
	}
	var retryAfter time.Duration
	if s := resp.Header.Get("Retry-After"); s != "" {
		if secs, err := strconv.Atoi(s); err == nil {
			retryAfter = time.Duration(secs) * time.Second
		}
	}
	data, perr := ParseEnvelope(raw)
	if batch && resp.StatusCode == http.StatusOK {
		if items, ok := batchItems(raw); ok {
			data, perr = items, nil
		}
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		if perr == nil || reasonOf(perr) != exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED {
			perr = sdk.ExchangeError(exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED, "50011", "Too Many Requests")
		}
		return nil, retryAfter, perr
	}
	if perr != nil {
		var se *sdk.Error
		if errors.As(perr, &se) {
			return nil, retryAfter, perr
		}
		if resp.StatusCode >= 500 || unsafe {
			return nil, retryAfter, lost("HTTP %d without an OKX answer: %v", resp.StatusCode, perr)
		}
		return nil, retryAfter, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "%s %s: HTTP %d: %v", method, reqPath, resp.StatusCode, perr)
	}
	if resp.StatusCode >= 300 {
		if unsafe {
			return nil, retryAfter, lost("HTTP %d with a success body", resp.StatusCode)
		}
		return nil, retryAfter, sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE, "%s %s: HTTP %d with a success body", method, reqPath, resp.StatusCode)
	}
	return data, 0, nil
}

// notSent reports transport errors that happen before a request can reach the server: no connection was made.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

func reasonOf(err error) exchangev1.ErrorReason {
	var se *sdk.Error
	if errors.As(err, &se) {
		return se.Detail.GetReason()
	}
	return exchangev1.ErrorReason_ERROR_REASON_UNSPECIFIED
}

// jsonBody is a helper for building request bodies without nil fields.
type jsonBody map[string]any

// envelope is OKX's REST response: {"code":"0","msg":"","data":[...]}.
type envelope struct {
	Code string          `json:"code"`
	Msg  string          `json:"msg"`
	Data json.RawMessage `json:"data"`
}

// itemStatus is the per-item result of order and batch endpoints.
type itemStatus struct {
	SCode string `json:"sCode"`
	SMsg  string `json:"sMsg"`
}

// ParseEnvelope decodes a REST body. A non-"0" code becomes a typed error carrying OKX's code and message; for
// order endpoints the first failing item's sCode/sMsg are used when present.
func ParseEnvelope(body []byte) (json.RawMessage, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if env.Code == "" {
		return nil, fmt.Errorf("%w: no code in %q", errMalformed, truncate(body))
	}
	if env.Code != "0" {
		var items []itemStatus
		if json.Unmarshal(env.Data, &items) == nil {
			for _, it := range items {
				if it.SCode != "" && it.SCode != "0" {
					return nil, apiError(it.SCode, it.SMsg)
				}
			}
		}
		return nil, apiError(env.Code, env.Msg)
	}
	if len(bytes.TrimSpace(env.Data)) == 0 || bytes.Equal(bytes.TrimSpace(env.Data), []byte("null")) {
		return json.RawMessage("[]"), nil
	}
	return env.Data, nil
}

// batchItems is the data of a batch answer whose top-level code is "0", "1" or "2" and whose every item carries
// an sCode; ok is false for any other body (a whole-request error).
func batchItems(body []byte) (json.RawMessage, bool) {
	var env envelope
	if json.Unmarshal(body, &env) != nil || (env.Code != "0" && env.Code != "1" && env.Code != "2") {
		return nil, false
	}
	var items []itemStatus
	if json.Unmarshal(env.Data, &items) != nil || len(items) == 0 {
		return nil, false
	}
	for _, it := range items {
		if it.SCode == "" {
			return nil, false
		}
	}
	return env.Data, true
}

// decodeList decodes the data array of an envelope.
func decodeList[T any](data json.RawMessage) ([]T, error) {
	var out []T
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	return out, nil
}

// checkItems returns the first per-item failure of an order endpoint's data.
func checkItems(items []itemStatus) error {
	for _, it := range items {
		if it.SCode != "" && it.SCode != "0" {
			return apiError(it.SCode, it.SMsg)
		}
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

func itemsOK(data []byte) error {
	items, err := decodeList[itemStatus](data)
	if err != nil {
		return sdk.Errorf(exchangev1.ErrorReason_ERROR_REASON_INTERNAL, "malformed acknowledgement: %v", err)
	}
	return checkItems(items)
}

// call runs an idempotent GET (signed when creds is set, retried on OKX's busy answers) and decodes the data array
// into rows of T; an answer that does not decode is INTERNAL naming the path.
func call[T any](ctx context.Context, s *Server, path string, q url.Values, creds *Credentials) ([]T, error) {
	data, err := s.client().Get(ctx, path, q, creds)
	if err != nil {
		return nil, err
	}
	rows, err := decodeList[T](data)
	if err != nil {
		return nil, internalf("%s: %v", path, err)
	}
	return rows, nil
}

// writeCall sends a non-idempotent POST exactly once (Client.Write), fails on an item's sCode, and decodes the
// first row of the answer into T; an answer without one is INTERNAL naming the path.
func writeCall[T any](ctx context.Context, s *Server, path string, body any, creds *Credentials) (T, error) {
	var zero T
	data, err := s.client().Write(ctx, path, body, creds)
	if err != nil {
		return zero, err
	}
	if err := itemsOK(data); err != nil {
		return zero, err
	}
	rows, err := decodeList[T](data)
	if err != nil || len(rows) == 0 {
		return zero, internalf("%s: malformed acknowledgement", path)
	}
	return rows[0], nil
}

// callOne is call for endpoints that answer one row; an answer without one is INTERNAL naming the path.
func callOne[T any](ctx context.Context, s *Server, path string, q url.Values, creds *Credentials) (T, error) {
	rows, err := call[T](ctx, s, path, q, creds)
	if err == nil && len(rows) == 0 {
		err = internalf("%s: malformed response", path)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return rows[0], nil
}

// ack sends a POST that answers items (amend-order, cancel-order, cancel-algos) and fails on an item's sCode. Whether
// it is retried on OKX's rate limit and whether a lost answer is UNKNOWN_OUTCOME follows nonIdempotent: an amend and
// a single cancel are sent once.
func ack(ctx context.Context, s *Server, path string, body any, creds *Credentials) error {
	data, err := s.client().Post(ctx, path, body, creds)
	if err != nil {
		return err
	}
	return itemsOK(data)
}
