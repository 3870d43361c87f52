package binance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// APIError is an error answer from Binance: the HTTP status, Binance's code and message, and Retry-After.
type APIError struct {
	Status     int
	Code       int
	Msg        string
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("binance: http %d code %d: %s", e.Status, e.Code, e.Msg)
}

// parseAPIError reads an error body `{"code":-1121,"msg":"Invalid symbol."}`. Bodies that are not Binance errors
// (an HTML page from a proxy, an empty body) still give an APIError carrying the HTTP status.
func parseAPIError(status int, body []byte, h http.Header) *APIError {
	e := &APIError{Status: status}
	var w struct {
		Code flexInt `json:"code"`
		Msg  string  `json:"msg"`
	}
	if err := json.Unmarshal(body, &w); err == nil && (w.Code != 0 || w.Msg != "") {
		e.Code, e.Msg = int(w.Code), w.Msg
	} else {
		snippet := strings.TrimSpace(string(body))
		if len(snippet) > 200 {
			snippet = snippet[:200]
		}
		e.Msg = strings.TrimSpace(http.StatusText(status) + " " + snippet)
	}
	if h != nil {
		if s := h.Get(headerRetryAfter); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				e.RetryAfter = time.Duration(n) * time.Second
			} else if t, err := http.ParseTime(s); err == nil {
				e.RetryAfter = time.Until(t)
			}
		}
	}
	return e
}

// codeReasons maps Binance error codes (spot and USDT-M) to typed reasons. Codes missing here fall back to their
// range (see reasonFor).
var codeReasons = map[int]exchangev1.ErrorReason{
	-1000: exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,      // UNKNOWN
	-1001: exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,      // DISCONNECTED
	-1002: exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,         // UNAUTHORIZED
	-1003: exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED,              // TOO_MANY_REQUESTS
	-1004: exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,      // SERVER_BUSY
	-1005: exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,      // NO_SUCH_IP
	-1006: exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,           // UNEXPECTED_RESP: execution status unknown
	-1007: exchangev1.ErrorReason_ERROR_REASON_UNKNOWN_OUTCOME,           // TIMEOUT: execution status unknown
	-1008: exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,      // SERVER_BUSY (overloaded)
	-1010: exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,      // ERROR_MSG_RECEIVED
	-1011: exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,         // NON_WHITE_LIST (IP not allowed)
	-1013: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // INVALID_MESSAGE (filter failure)
	-1014: exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,          // UNKNOWN_ORDER_COMPOSITION
	-1015: exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED,              // TOO_MANY_ORDERS
	-1016: exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,      // SERVICE_SHUTTING_DOWN
	-1020: exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED,             // UNSUPPORTED_OPERATION
	-1021: exchangev1.ErrorReason_ERROR_REASON_CLOCK_SKEW,                // INVALID_TIMESTAMP (outside recvWindow)
	-1022: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,               // INVALID_SIGNATURE
	-1023: exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,          // START_TIME_GREATER_THAN_END_TIME
	-1099: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,               // NOT_FOUND / not authenticated
	-1111: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // BAD_PRECISION
	-1121: exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND,      // BAD_SYMBOL
	-1122: exchangev1.ErrorReason_ERROR_REASON_INSTRUMENT_NOT_FOUND,      // INVALID_SYMBOLSTATUS
	-1125: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,               // INVALID_LISTEN_KEY
	-2010: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // NEW_ORDER_REJECTED (message refines)
	-2011: exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND,           // CANCEL_REJECTED
	-2012: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // CANCEL_ALL_FAIL
	-2013: exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND,           // NO_SUCH_ORDER
	-2014: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,               // BAD_API_KEY_FMT
	-2015: exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED,         // REJECTED_MBX_KEY (key, IP or permission)
	-2016: exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE,      // NO_TRADING_WINDOW
	-2017: exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED,               // API_KEYS_LOCKED
	-2018: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,        // BALANCE_NOT_SUFFICIENT
	-2019: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,        // MARGIN_NOT_SUFFICIEN
	-2020: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // UNABLE_TO_FILL
	-2021: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // ORDER_WOULD_IMMEDIATELY_TRIGGER
	-2022: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // REDUCE_ONLY_REJECT
	-2023: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // USER_IN_LIQUIDATION
	-2024: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,        // POSITION_NOT_SUFFICIENT
	-2025: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // MAX_OPEN_ORDER_EXCEEDED
	-2026: exchangev1.ErrorReason_ERROR_REASON_NOT_SUPPORTED,             // REDUCE_ONLY_ORDER_TYPE_NOT_SUPPORTED
	-2027: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // MAX_LEVERAGE_RATIO
	-2028: exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS,        // MIN_LEVERAGE_RATIO
	-4001: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // PRICE_LESS_THAN_ZERO
	-4002: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // PRICE_GREATER_THAN_MAX_PRICE
	-4003: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // QTY_LESS_THAN_ZERO
	-4004: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // QTY_LESS_THAN_MIN_QTY
	-4005: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // QTY_GREATER_THAN_MAX_QTY
	-4013: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // PRICE_LESS_THAN_MIN_PRICE
	-4014: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // PRICE_NOT_INCREASED_BY_TICK_SIZE
	-4015: exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,          // INVALID_CL_ORD_ID_LEN
	-4023: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // QTY_NOT_INCREASED_BY_STEP_SIZE
	-4024: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // PRICE_LOWER_THAN_MULTIPLIER_DOWN
	-4028: exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,          // INVALID_LEVERAGE
	-4046: exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,          // NO_NEED_TO_CHANGE_MARGIN_TYPE
	-4047: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // THERE_EXISTS_OPEN_ORDERS
	-4048: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // THERE_EXISTS_QUANTITY
	-4059: exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT,          // NO_NEED_TO_CHANGE_POSITION_SIDE
	-4061: exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH,    // POSITION_SIDE_NOT_MATCH
	-4167: exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,     // multi-assets mode with isolated symbols
	-4168: exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,     // isolated margin under multi-assets mode
	-4170: exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,     // multi-assets mode change with open orders
	-4171: exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH,     // asset mode already set
	-4067: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // POSITION_SIDE_CHANGE_EXISTS_OPEN_ORDERS
	-4068: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // POSITION_SIDE_CHANGE_EXISTS_QUANTITY
	-4116: exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID, // DUPLICATED_CLIENT_ORDER_ID
	-4131: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // MARKET_ORDER_REJECT (PERCENT_PRICE)
	-4164: exchangev1.ErrorReason_ERROR_REASON_PRECISION,                 // MIN_NOTIONAL
	-5021: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // FOK could not be filled
	-5022: exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED,            // GTX (post only) would take
}

// reasonFor maps a Binance error to a typed reason: first the HTTP status (rate limits, bans, outages), then the
// code, then refinements by message for codes Binance overloads (-2010, -1013), then the code's range.
func reasonFor(e *APIError) exchangev1.ErrorReason {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusTeapot:
		return exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED
	case http.StatusUnauthorized:
		if e.Code == 0 {
			return exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED
		}
	case http.StatusForbidden:
		if e.Code == 0 { // WAF rejection
			return exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE
		}
	}
	if e.Status >= 500 && e.Code == 0 {
		return exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE
	}
	msg := strings.ToLower(e.Msg)
	switch {
	case strings.Contains(msg, "insufficient balance") || strings.Contains(msg, "insufficient margin") ||
		strings.Contains(msg, "margin is insufficient"):
		return exchangev1.ErrorReason_ERROR_REASON_INSUFFICIENT_FUNDS
	case strings.Contains(msg, "duplicate order") || strings.Contains(msg, "duplicate client"):
		return exchangev1.ErrorReason_ERROR_REASON_DUPLICATE_CLIENT_ORDER_ID
	case strings.Contains(msg, "unknown order") || strings.Contains(msg, "order does not exist"):
		return exchangev1.ErrorReason_ERROR_REASON_ORDER_NOT_FOUND
	case strings.Contains(msg, "reduceonly") || strings.Contains(msg, "reduce only") || strings.Contains(msg, "reduce-only"):
		return exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED
	case strings.Contains(msg, "position side does not match"):
		return exchangev1.ErrorReason_ERROR_REASON_POSITION_MODE_MISMATCH
	case strings.Contains(msg, "multi-assets") || strings.Contains(msg, "multi assets") ||
		strings.Contains(msg, "portfolio margin") || strings.Contains(msg, "unified account"):
		return exchangev1.ErrorReason_ERROR_REASON_ACCOUNT_MODE_MISMATCH
	case strings.Contains(msg, "permission"):
		if e.Code != -2014 && e.Code != -1022 {
			return exchangev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED
		}
	}
	if r, ok := codeReasons[e.Code]; ok {
		return r
	}
	switch c := -e.Code; {
	case c >= 1000 && c < 1100:
		return exchangev1.ErrorReason_ERROR_REASON_EXCHANGE_UNAVAILABLE
	case c >= 1100 && c < 2000:
		return exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT
	case c >= 2000 && c < 3000:
		return exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED
	case c >= 3000 && c < 4000: // margin / sapi
		return exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT
	case c >= 4000 && c < 5000:
		return exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT
	case c >= 5000 && c < 6000:
		return exchangev1.ErrorReason_ERROR_REASON_ORDER_REJECTED
	}
	if e.Status >= 400 && e.Status < 500 {
		return exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT
	}
	return exchangev1.ErrorReason_ERROR_REASON_INTERNAL
}

// ToSDK turns an APIError into the typed contract error, keeping Binance's raw code and message.
func (e *APIError) ToSDK() *sdk.Error {
	reason := reasonFor(e)
	code := ""
	if e.Code != 0 {
		code = strconv.Itoa(e.Code)
	} else {
		code = "http_" + strconv.Itoa(e.Status)
	}
	se := sdk.ExchangeError(reason, code, e.Msg)
	if reason == exchangev1.ErrorReason_ERROR_REASON_RATE_LIMITED {
		ra := e.RetryAfter
		if ra <= 0 {
			ra = time.Second
		}
		se.Detail.RetryAfterMs = ra.Milliseconds()
	}
	return se
}
