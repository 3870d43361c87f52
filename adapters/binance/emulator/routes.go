package emulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/exhub/exhub/plugin-sdk/faults"
)

// security is Binance's endpoint security type.
type security uint8

const (
	secNone   security = iota
	secAPIKey          // USER_STREAM / MARKET_DATA: the API key header only
	secSigned          // TRADE / USER_DATA: key, timestamp, recvWindow and HMAC-SHA256 signature
)

// req is one REST request after authentication.
type req struct {
	w       http.ResponseWriter
	r       *http.Request
	p       url.Values
	futures bool
	account string
	apiKey  string
}

func (q *req) str(name string) string { return strings.TrimSpace(q.p.Get(name)) }

func (q *req) has(name string) bool { return q.p.Get(name) != "" }

// int64Param parses an optional integer parameter (def when absent).
func (q *req) int64Param(name string, def int64) (int64, error) {
	s := q.str(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, illegal(name)
	}
	return n, nil
}

func (q *req) intParam(name string, def int) (int, error) {
	n, err := q.int64Param(name, int64(def))
	return int(n), err
}

func (q *req) boolParam(name string) (bool, error) {
	switch strings.ToLower(q.str(name)) {
	case "":
		return false, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, illegal(name)
}

type route struct {
	futures bool
	sec     security
	weight  int
	// weightOf, when set, computes the weight from the parameters (depth limits, all-symbol queries).
	weightOf func(url.Values) int
	// orders marks endpoints that place orders (they count against the ORDERS limits).
	orders bool
	// clientIDs, when set, names the client ids a request carries; a fault armed for one of them (faults.Path)
	// applies to the request.
	clientIDs func(*req) []string
	fn        func(*req) (any, error)
}

// handle registers one route ("GET /api/v3/time").
func (s *Server) handle(mux *http.ServeMux, pattern string, rt route) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { s.serveREST(w, r, rt) })
}

func (s *Server) serveREST(w http.ResponseWriter, r *http.Request, rt route) {
	weight := rt.weight
	if rt.weightOf != nil {
		weight = rt.weightOf(r.URL.Query())
	}
	if e := s.lim.take(w, r, rt.futures, weight); e != nil {
		writeErr(w, e)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeErr(w, errf(http.StatusBadRequest, codeUnknown, "could not read the request body"))
		return
	}
	rawQuery := r.URL.RawQuery
	rawBody := ""
	if len(body) > 0 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		rawBody = string(body)
	}
	p, err := url.ParseQuery(rawQuery)
	if err != nil {
		writeErr(w, errf(http.StatusBadRequest, codeIllegalChars, "Illegal characters found in a parameter."))
		return
	}
	if rawBody != "" {
		bp, err := url.ParseQuery(rawBody)
		if err != nil {
			writeErr(w, errf(http.StatusBadRequest, codeIllegalChars, "Illegal characters found in a parameter."))
			return
		}
		for k, vs := range bp {
			p[k] = append(p[k], vs...)
		}
	}
	q := &req{w: w, r: r, p: p, futures: rt.futures}
	if rt.sec != secNone {
		if e := s.authenticate(q, rt.sec, rawQuery, rawBody); e != nil {
			writeErr(w, e)
			return
		}
	}
	if rt.orders {
		if e := s.lim.takeOrder(w, rt.futures, q.account); e != nil {
			writeErr(w, e)
			return
		}
	}
	fault, faulted := s.takeFault(q, rt)
	if faulted && fault == faults.DropBefore {
		faults.Drop(w)
		return
	}
	out, err := rt.fn(q)
	if faulted {
		// The request executed (or was refused: the answer is lost either way).
		if fault == faults.AcceptThenDrop {
			faults.Drop(w)
			return
		}
		writeErr(w, errf(http.StatusRequestTimeout, codeExecUnknown,
			"Timeout waiting for response from backend server. Send status unknown; execution status unknown."))
		return
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, out)
}

// takeFault uses up a fault armed for one of the request's client ids.
func (s *Server) takeFault(q *req, rt route) (faults.Kind, bool) {
	if rt.clientIDs == nil || s.faults.Pending() == 0 {
		return "", false
	}
	for _, id := range rt.clientIDs(q) {
		if k, ok := s.faults.Take(id); ok {
			return k, true
		}
	}
	return "", false
}

// paramIDs names the client ids a request carries in the given parameters.
func paramIDs(names ...string) func(*req) []string {
	return func(q *req) []string {
		var out []string
		for _, n := range names {
			if v := q.str(n); v != "" {
				out = append(out, v)
			}
		}
		return out
	}
}

// batchIDs names the newClientOrderId of every order of a batchOrders request.
func batchIDs(q *req) []string {
	items, err := batchParams(q)
	if err != nil {
		return nil
	}
	var out []string
	for _, it := range items {
		if v := strings.TrimSpace(it["newClientOrderId"]); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// authenticate checks the API key and, for signed endpoints, timestamp, recvWindow and signature.
func (s *Server) authenticate(q *req, sec security, rawQuery, rawBody string) *apiError {
	key := q.r.Header.Get("X-MBX-APIKEY")
	if key == "" {
		return errf(http.StatusUnauthorized, codeAPIKeyFormat, "API-key format invalid.")
	}
	s.mu.Lock()
	cred, ok := s.creds[key]
	s.mu.Unlock()
	if !ok {
		return errf(http.StatusUnauthorized, codeRejectedMBXKey, "Invalid API-key, IP, or permissions for action.")
	}
	q.account, q.apiKey = cred.Account, key
	if sec != secSigned {
		return nil
	}
	sig := q.p.Get("signature")
	if sig == "" {
		return badParam("signature")
	}
	if !q.has("timestamp") {
		return badParam("timestamp")
	}
	ts, err := strconv.ParseInt(q.str("timestamp"), 10, 64)
	if err != nil {
		return illegal("timestamp")
	}
	recv := int64(5000)
	if q.has("recvWindow") {
		recv, err = strconv.ParseInt(q.str("recvWindow"), 10, 64)
		if err != nil || recv <= 0 {
			return illegal("recvWindow")
		}
		if recv > 60000 {
			return errf(http.StatusBadRequest, -1131, "recvWindow must be less than 60000")
		}
	}
	now := s.v.Now()
	if ts >= now+1000 {
		return errf(http.StatusBadRequest, codeTimestamp, "Timestamp for this request was 1000ms ahead of the server's time.")
	}
	if now-ts > recv {
		return errf(http.StatusBadRequest, codeTimestamp, "Timestamp for this request is outside of the recvWindow.")
	}
	payload := stripSignature(rawQuery) + stripSignature(rawBody)
	mac := hmac.New(sha256.New, []byte(cred.Secret))
	mac.Write([]byte(payload))
	want := mac.Sum(nil)
	got, err := hex.DecodeString(strings.ToLower(sig))
	if err != nil || !hmac.Equal(want, got) {
		return errf(http.StatusBadRequest, codeSignature, "Signature for this request is not valid.")
	}
	return nil
}

// stripSignature removes the signature parameter from a raw query or body, keeping every other byte as sent.
func stripSignature(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	out := parts[:0]
	for _, p := range parts {
		if strings.HasPrefix(p, "signature=") {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, "&")
}

// Sign computes Binance's HMAC-SHA256 signature (hex) of a payload; tests and examples use it.
func Sign(secret, payload string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(payload))
	return hex.EncodeToString(mac.Sum(nil))
}

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	// Spot public.
	s.handle(mux, "GET /api/v3/ping", route{weight: 1, fn: func(*req) (any, error) { return struct{}{}, nil }})
	s.handle(mux, "GET /api/v3/time", route{weight: 1, fn: s.getTime})
	s.handle(mux, "GET /api/v3/exchangeInfo", route{weight: 20, fn: s.spotExchangeInfo})
	s.handle(mux, "GET /api/v3/depth", route{weightOf: spotDepthWeight, fn: s.getDepth})
	s.handle(mux, "GET /api/v3/klines", route{weight: 2, fn: s.getKlines})
	s.handle(mux, "GET /api/v3/uiKlines", route{weight: 2, fn: s.getKlines})
	s.handle(mux, "GET /api/v3/trades", route{weight: 25, fn: s.getTrades})
	s.handle(mux, "GET /api/v3/aggTrades", route{weight: 4, fn: s.getAggTrades})
	s.handle(mux, "GET /api/v3/ticker/24hr", route{weightOf: spotTickerWeight, fn: s.getTicker24})
	s.handle(mux, "GET /api/v3/ticker/price", route{weight: 2, fn: s.getTickerPrice})
	s.handle(mux, "GET /api/v3/ticker/bookTicker", route{weight: 2, fn: s.getBookTicker})
	// Futures public.
	f := func(weight int, fn func(*req) (any, error)) route {
		return route{futures: true, weight: weight, fn: fn}
	}
	s.handle(mux, "GET /fapi/v1/ping", f(1, func(*req) (any, error) { return struct{}{}, nil }))
	s.handle(mux, "GET /fapi/v1/time", f(1, s.getTime))
	s.handle(mux, "GET /fapi/v1/exchangeInfo", f(1, s.futExchangeInfo))
	s.handle(mux, "GET /fapi/v1/depth", route{futures: true, weightOf: futDepthWeight, fn: s.getDepth})
	s.handle(mux, "GET /fapi/v1/klines", route{futures: true, weightOf: futKlineWeight, fn: s.getKlines})
	s.handle(mux, "GET /fapi/v1/trades", f(5, s.getTrades))
	s.handle(mux, "GET /fapi/v1/aggTrades", f(20, s.getAggTrades))
	s.handle(mux, "GET /fapi/v1/ticker/24hr", route{futures: true, weightOf: allSymbols(1, 40), fn: s.getTicker24})
	s.handle(mux, "GET /fapi/v1/ticker/price", f(1, s.getTickerPrice))
	s.handle(mux, "GET /fapi/v2/ticker/price", f(1, s.getTickerPrice))
	s.handle(mux, "GET /fapi/v1/ticker/bookTicker", f(1, s.getBookTicker))
	s.handle(mux, "GET /fapi/v1/premiumIndex", route{futures: true, weightOf: allSymbols(1, 10), fn: s.getPremiumIndex})
	s.handle(mux, "GET /fapi/v1/fundingRate", f(1, s.getFundingRate))
	s.handle(mux, "GET /fapi/v1/openInterest", f(1, s.getOpenInterest))
	s.handle(mux, "GET /futures/data/openInterestHist", f(0, s.statHandler(statOI)))
	s.handle(mux, "GET /futures/data/globalLongShortAccountRatio", f(0, s.statHandler(statGlobalAccount)))
	s.handle(mux, "GET /futures/data/topLongShortAccountRatio", f(0, s.statHandler(statTopAccount)))
	s.handle(mux, "GET /futures/data/topLongShortPositionRatio", f(0, s.statHandler(statTopPosition)))
	s.handle(mux, "GET /futures/data/takerlongshortRatio", f(0, s.statHandler(statTaker)))
	s.tradingRoutes(mux)
	s.orderListRoutes(mux)
	mux.Handle("POST "+faults.Path, s.faults)
	// WebSocket: spot under /ws and /stream, futures under /fws (with optional /public, /market, /private).
	mux.HandleFunc("GET /ws/{rest...}", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, false, r.PathValue("rest")) })
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, false, "") })
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, false, "") })
	for _, pre := range []string{"/fws", "/fws/public", "/fws/market", "/fws/private"} {
		mux.HandleFunc("GET "+pre+"/ws/{rest...}", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, true, r.PathValue("rest")) })
		mux.HandleFunc("GET "+pre+"/ws", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, true, "") })
		mux.HandleFunc("GET "+pre+"/stream", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, true, "") })
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "<html><body><h2>404 Not found</h2></body></html>")
	})
	return mux
}

// Request weights that depend on the parameters, as Binance documents them.
func limitOf(p url.Values, def int) int {
	n, err := strconv.Atoi(p.Get("limit"))
	if err != nil || n <= 0 {
		return def
	}
	return n
}

func spotDepthWeight(p url.Values) int {
	switch n := limitOf(p, 100); {
	case n <= 100:
		return 5
	case n <= 500:
		return 25
	case n <= 1000:
		return 50
	default:
		return 250
	}
}

func futDepthWeight(p url.Values) int {
	switch n := limitOf(p, 500); {
	case n <= 50:
		return 2
	case n <= 100:
		return 5
	case n <= 500:
		return 10
	default:
		return 20
	}
}

func futKlineWeight(p url.Values) int {
	switch n := limitOf(p, 500); {
	case n < 100:
		return 1
	case n < 500:
		return 2
	case n <= 1000:
		return 5
	default:
		return 10
	}
}

func spotTickerWeight(p url.Values) int {
	if p.Get("symbol") != "" {
		return 2
	}
	if raw := p.Get("symbols"); raw != "" {
		n := strings.Count(raw, ",") + 1
		switch {
		case n <= 20:
			return 2
		case n <= 100:
			return 40
		}
	}
	return 80
}

// allSymbols weighs one-symbol queries at one and all-symbol queries at all.
func allSymbols(one, all int) func(url.Values) int {
	return func(p url.Values) int {
		if p.Get("symbol") != "" {
			return one
		}
		return all
	}
}
