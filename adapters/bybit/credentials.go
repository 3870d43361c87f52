package bybit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Credentials of one Bybit API key (HMAC keys; Bybit's RSA keys are not supported).
type Credentials struct {
	APIKey string
	Secret string
}

// defaultRecvWindow is X-BAPI-RECV-WINDOW: how long after X-BAPI-TIMESTAMP Bybit still takes the request (ms).
const defaultRecvWindow = 5000

// Sign is Bybit v5's request signature: hex(HMAC-SHA256(secret, timestamp + apiKey + recvWindow + payload)), where
// payload is the query string of a GET (exactly as sent) or the raw JSON body of a POST.
func Sign(secret, timestamp, apiKey, recvWindow, payload string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp + apiKey + recvWindow + payload))
	return hex.EncodeToString(m.Sum(nil))
}

// WSAuthSign is the private WebSocket's auth signature: hex(HMAC-SHA256(secret, "GET/realtime" + expires)).
func WSAuthSign(secret string, expiresMs int64) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("GET/realtime" + strconv.FormatInt(expiresMs, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

var errNoAccount = sdk.FieldError(exchangev1.ErrorReason_ERROR_REASON_AUTH_FAILED, "account", "a Bybit API key and secret are required")

// credsOf reads Bybit credentials from an AccountRef.
func credsOf(a *exchangev1.AccountRef) (*Credentials, error) {
	c := &Credentials{APIKey: a.GetApiKey(), Secret: a.GetApiSecret()}
	if c.APIKey == "" || c.Secret == "" {
		return nil, errNoAccount
	}
	return c, nil
}
