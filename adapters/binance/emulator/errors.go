package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/exhub/exhub/adapters/venue"
)

// apiError is a Binance error body with its HTTP status.
type apiError struct {
	status     int
	Code       int    `json:"code"`
	Msg        string `json:"msg"`
	retryAfter int
	html       bool // an edge error page instead of a JSON body
}

func (e *apiError) Error() string { return fmt.Sprintf("binance %d: %s", e.Code, e.Msg) }

func errf(status, code int, format string, args ...any) *apiError {
	return &apiError{status: status, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Binance error codes used by the emulator.
const (
	codeUnknown          = -1000
	codeTooManyRequests  = -1003
	codeUnauthorized     = -1002
	codeExecUnknown      = -1007
	codeTimestamp        = -1021
	codeSignature        = -1022
	codeIllegalChars     = -1100
	codeMandatoryParam   = -1102
	codeUnknownParam     = -1104
	codeEmptyParam       = -1105
	codeBadPrecision     = -1111
	codeInvalidTIF       = -1115
	codeInvalidOrderType = -1116
	codeInvalidSide      = -1117
	codeInvalidInterval  = -1120
	codeInvalidSymbol    = -1121
	codeInvalidListenKey = -1125
	codeBadParam         = -1130
	codeFilterFailure    = -1013
	codeNewOrderRejected = -2010
	codeCancelRejected   = -2011
	codeNoSuchOrder      = -2013
	codeAPIKeyFormat     = -2014
	codeRejectedMBXKey   = -2015
	codeMarginShortfall  = -2019
	codeReduceOnlyReject = -2022
	codeWouldTrigger     = -2021
	codeNoNeedMarginType = -4046
	codeMarginTypeOrders = -4047
	codeMarginTypePos    = -4048
	codeNoNeedPosSide    = -4059
	codePositionSide     = -4061
	codePosSideOrders    = -4067
	codePosSidePositions = -4068
	codeLeverage         = -4028
	codeMinNotionalFut   = -4164
	codePostOnly         = -5022
)

func badParam(name string) *apiError {
	return errf(http.StatusBadRequest, codeMandatoryParam,
		"Mandatory parameter '%s' was not sent, was empty/null, or malformed.", name)
}

func illegal(name string) *apiError {
	return errf(http.StatusBadRequest, codeBadParam, "Data sent for parameter '%s' is not valid.", name)
}

func invalidSymbol() *apiError {
	return errf(http.StatusBadRequest, codeInvalidSymbol, "Invalid symbol.")
}

// writeJSON writes a 200 JSON body.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeErr(w, errf(http.StatusInternalServerError, codeUnknown, "An unknown error occurred while processing the request."))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// writeErr writes a Binance error body; any error that is not an *apiError becomes -1000 with HTTP 500.
func writeErr(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = errf(http.StatusInternalServerError, codeUnknown, "An unknown error occurred while processing the request.")
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	if e.html {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(e.status)
		_, _ = fmt.Fprintf(w, "<html><body><h1>%d %s</h1></body></html>", e.status, http.StatusText(e.status))
		return
	}
	b, _ := json.Marshal(e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// orderError maps a venue rejection of a new order to Binance's code for the market.
func orderError(futures bool, err error) *apiError {
	var e *apiError
	if errors.As(err, &e) {
		return e
	}
	bad := http.StatusBadRequest
	switch {
	case errors.Is(err, venue.ErrInsufficientFunds):
		if futures {
			return errf(bad, codeMarginShortfall, "Margin is insufficient.")
		}
		return errf(bad, codeNewOrderRejected, "Account has insufficient balance for requested action.")
	case errors.Is(err, venue.ErrMinNotional):
		if futures {
			return errf(bad, codeMinNotionalFut, "Order's notional must be no smaller than the minimum notional.")
		}
		return errf(bad, codeFilterFailure, "Filter failure: NOTIONAL")
	case errors.Is(err, venue.ErrPrecision):
		return errf(bad, codeBadPrecision, "Precision is over the maximum defined for this asset.")
	case errors.Is(err, venue.ErrOutOfRange):
		if futures {
			return errf(bad, -4003, "Quantity less than or equal to zero.")
		}
		return errf(bad, codeFilterFailure, "Filter failure: LOT_SIZE")
	case errors.Is(err, venue.ErrReduceOnly):
		return errf(bad, codeReduceOnlyReject, "ReduceOnly Order is rejected.")
	case errors.Is(err, venue.ErrPositionSide):
		return errf(bad, codePositionSide, "Order's position side does not match user's setting.")
	case errors.Is(err, venue.ErrWouldTrigger):
		return errf(bad, codeWouldTrigger, "Order would immediately trigger.")
	case errors.Is(err, venue.ErrDuplicateClientID):
		if futures {
			return errf(bad, -4015, "Client order id is not valid.")
		}
		return errf(bad, codeNewOrderRejected, "Duplicate order sent.")
	case errors.Is(err, venue.ErrNotTrading):
		return errf(bad, codeFilterFailure, "Market is closed.")
	case errors.Is(err, venue.ErrInstrument):
		return invalidSymbol()
	case errors.Is(err, venue.ErrOrderNotFound):
		return errf(bad, codeNoSuchOrder, "Order does not exist.")
	case errors.Is(err, venue.ErrLeverage):
		return errf(bad, codeLeverage, "Leverage is not valid")
	case errors.Is(err, venue.ErrInvalidOrder), errors.Is(err, venue.ErrBadNumber):
		return errf(bad, codeNewOrderRejected, "%s", trimVenue(err))
	}
	return errf(http.StatusInternalServerError, codeUnknown, "An unknown error occurred while processing the request.")
}

func trimVenue(err error) string {
	s := err.Error()
	if len(s) > 7 && s[:7] == "venue: " {
		return s[7:]
	}
	return s
}
