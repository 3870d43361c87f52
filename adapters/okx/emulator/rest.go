package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/exhub/exhub/plugin-sdk/faults"
)

// request is what a handler sees: the query, the raw body and, for private endpoints, the venue account.
type request struct {
	r       *http.Request
	q       url.Values
	body    []byte
	account string
	// key is the API key of a signed request.
	key Credentials
	// fault is the strongest fault taken for the request's client ids; perItem says the handler answered an
	// AcceptThenError itself with per-item sCode 50004 (batch orders).
	fault   faults.Kind
	errIDs  map[string]bool
	perItem bool
}

// faultRank orders fault kinds: a request hit by several takes the strongest.
var faultRank = map[faults.Kind]int{faults.AcceptThenError: 1, faults.AcceptThenDrop: 2, faults.DropBefore: 3}

// takeFault uses up the faults armed for the request's client ids. It reports true when the request must not run
// (DropBefore); the route then closes the connection without an answer.
func (s *Server) takeFault(q *request, ids ...string) bool {
	for _, id := range ids {
		k, ok := s.faults.Take(id)
		if !ok {
			continue
		}
		if k == faults.AcceptThenError {
			if q.errIDs == nil {
				q.errIDs = map[string]bool{}
			}
			q.errIDs[id] = true
		}
		if faultRank[k] > faultRank[q.fault] {
			q.fault = k
		}
	}
	return q.fault == faults.DropBefore
}

// errTimeout is OKX's answer when the outcome of a request is unknown to OKX itself.
func errTimeout() *apiError {
	return &apiError{http.StatusBadRequest, "50004",
		"API endpoint request timeout (does not mean that the request was successful or failed, please check the request result)."}
}

func (q *request) get(name string) string { return strings.TrimSpace(q.q.Get(name)) }

// decode reads the JSON body into v.
func (q *request) decode(v any) *apiError {
	if len(q.body) == 0 {
		return &apiError{http.StatusBadRequest, "50000", "Body can not be empty"}
	}
	if err := json.Unmarshal(q.body, v); err != nil {
		return &apiError{http.StatusBadRequest, "50002", "Json data format error"}
	}
	return nil
}

// result is a handler's answer: data rows, or an error. top overrides the top-level code of per-item endpoints
// ("1" or "2" when items failed) and stamps inTime/outTime.
type result struct {
	data  any
	top   string
	msg   string
	stamp bool
}

type handler func(*request) (result, *apiError)

// route registers an endpoint with its rate limit per two seconds. Private endpoints check the signature first.
func (s *Server) route(method, path string, limit int, private bool, h handler) {
	s.mux.HandleFunc(method+" "+path, func(w http.ResponseWriter, r *http.Request) {
		in := time.Now()
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			writeError(w, &apiError{http.StatusBadRequest, "50000", "Body can not be read"})
			return
		}
		q := &request{r: r, q: r.URL.Query(), body: body}
		key := clientIP(r)
		if private {
			acct, aerr := s.authenticate(r, body)
			if aerr != nil {
				writeError(w, aerr)
				return
			}
			q.account = acct
			key = r.Header.Get("OK-ACCESS-KEY")
			q.key, _ = s.credential(key)
			if p := permFor(method, path); p != "" && !q.key.may(p) {
				writeError(w, &apiError{http.StatusUnauthorized, "50120", "API key doesn't have permission for this operation (" + p + ")"})
				return
			}
		}
		if !s.limits.allow(path+"|"+key, limit, time.Now()) {
			writeError(w, &apiError{http.StatusTooManyRequests, "50011", "Too Many Requests"})
			return
		}
		res, aerr := h(q)
		switch q.fault {
		case faults.DropBefore, faults.AcceptThenDrop:
			faults.Drop(w)
			return
		case faults.AcceptThenError:
			if !q.perItem {
				writeError(w, errTimeout())
				return
			}
		}
		if aerr != nil {
			writeError(w, aerr)
			return
		}
		env := envelope{Code: "0", Msg: res.msg, Data: res.data}
		if res.top != "" {
			env.Code = res.top
		}
		if env.Data == nil {
			env.Data = []any{}
		}
		if res.stamp {
			env.InTime = strconv.FormatInt(in.UnixMicro(), 10)
			env.OutTime = strconv.FormatInt(time.Now().UnixMicro(), 10)
		}
		writeJSON(w, http.StatusOK, env)
	})
}

// permFor is the key permission a private call needs beyond reading: "trade" for every change to orders,
// positions and account settings, "withdraw" for withdrawals; "" for reads and moves inside the account.
func permFor(method, path string) string {
	switch {
	case method == http.MethodGet:
		return ""
	case path == "/api/v5/asset/withdrawal":
		return "withdraw"
	case strings.HasPrefix(path, "/api/v5/trade/"), strings.HasPrefix(path, "/api/v5/account/set-"),
		strings.HasPrefix(path, "/api/v5/asset/convert/trade"):
		return "trade"
	}
	return ""
}

// authenticate checks OKX's request signature: OK-ACCESS-SIGN = Base64(HMAC-SHA256(secret, timestamp + METHOD +
// requestPath (with the query string) + body)), OK-ACCESS-TIMESTAMP an ISO 8601 time with milliseconds within the
// allowed window of the venue clock, OK-ACCESS-PASSPHRASE the key's passphrase. x-simulated-trading is accepted.
func (s *Server) authenticate(r *http.Request, body []byte) (string, *apiError) {
	h := r.Header
	key, sign, ts, pass := h.Get("OK-ACCESS-KEY"), h.Get("OK-ACCESS-SIGN"), h.Get("OK-ACCESS-TIMESTAMP"),
		h.Get("OK-ACCESS-PASSPHRASE")
	unauth := func(code, msg string) *apiError { return &apiError{http.StatusUnauthorized, code, msg} }
	switch {
	case key == "":
		return "", unauth("50103", "Request header OK-ACCESS-KEY can not be empty.")
	case pass == "":
		return "", unauth("50104", "Request header OK-ACCESS-PASSPHRASE can not be empty.")
	case sign == "":
		return "", unauth("50106", "Request header OK-ACCESS-SIGN can not be empty.")
	case ts == "":
		return "", unauth("50107", "Request header OK-ACCESS-TIMESTAMP can not be empty.")
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "", unauth("50112", "Invalid OK-ACCESS-TIMESTAMP")
	}
	now := time.UnixMilli(s.v.Now())
	if d := now.Sub(t); d > s.cfg.TimestampWindow || d < -s.cfg.TimestampWindow {
		return "", unauth("50102", "Timestamp request expired")
	}
	c, ok := s.credential(key)
	if !ok {
		return "", unauth("50111", "Invalid OK-ACCESS-KEY")
	}
	if pass != c.Passphrase {
		return "", unauth("50105", "Request header OK-ACCESS-PASSPHRASE incorrect.")
	}
	if sim := h.Get("x-simulated-trading"); sim != "" && sim != "1" && sim != "0" {
		return "", unauth("50101", "APIKey does not match current environment.")
	}
	want := Sign(c.Secret, ts, r.Method, r.URL.RequestURI(), string(body))
	if !hmac.Equal([]byte(want), []byte(sign)) {
		return "", unauth("50113", "Invalid Sign")
	}
	return c.Account, nil
}

// Sign computes OKX's REST signature. Exported so tests and tools can sign requests for the emulator.
func Sign(secret, timestamp, method, requestPath, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp + strings.ToUpper(method) + requestPath + body))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// routes registers every endpoint. Limits follow OKX's documented requests per two seconds.
func (s *Server) routes() {
	s.mux = http.NewServeMux()
	// public market data
	s.route("GET", "/api/v5/public/instruments", 20, false, s.instruments)
	s.route("GET", "/api/v5/market/tickers", 20, false, s.tickers)
	s.route("GET", "/api/v5/market/ticker", 20, false, s.ticker)
	s.route("GET", "/api/v5/public/mark-price", 10, false, s.markPrice)
	s.route("GET", "/api/v5/market/index-tickers", 20, false, s.indexTickers)
	s.route("GET", "/api/v5/public/funding-rate", 20, false, s.fundingRate)
	s.route("GET", "/api/v5/public/funding-rate-history", 10, false, s.fundingHistory)
	s.route("GET", "/api/v5/market/books", 40, false, s.books)
	s.route("GET", "/api/v5/market/candles", 40, false, s.candles(300))
	s.route("GET", "/api/v5/market/history-candles", 20, false, s.candles(100))
	s.route("GET", "/api/v5/market/trades", 100, false, s.trades)
	s.route("GET", "/api/v5/public/time", 10, false, s.serverTime)
	s.route("GET", "/api/v5/public/open-interest", 20, false, s.openInterest)
	s.route("GET", "/api/v5/rubik/stat/contracts/long-short-account-ratio", 5, false, s.longShortRatio)
	s.route("GET", "/api/v5/rubik/stat/taker-volume", 5, false, s.takerVolume)
	s.route("GET", "/api/v5/rubik/stat/contracts/open-interest-volume", 5, false, s.oiVolume)
	s.mux.Handle(faults.Path, s.faults)
	s.privateRoutes()
	s.wsRoutes()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{http.StatusNotFound, "50000", "Not Found: " + r.URL.Path})
	})
}
