package okx

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"time"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Credentials of one OKX API key.
type Credentials struct {
	APIKey     string
	Secret     string
	Passphrase string
}

// Valid reports whether every part is present.
func (c Credentials) Valid() bool { return c.APIKey != "" && c.Secret != "" && c.Passphrase != "" }

// Sign is OKX's request signature: Base64(HMAC-SHA256(secret, timestamp + METHOD + requestPath + body)), where
// requestPath includes the query string and body is the JSON body ("" for GET).
func Sign(secret, timestamp, method, requestPath, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp + method + requestPath + body))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// RESTTimestamp is the OK-ACCESS-TIMESTAMP format: ISO 8601 UTC with milliseconds.
func RESTTimestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// LoginSign is the WebSocket login signature for a Unix-seconds timestamp.
func LoginSign(secret string, unixSeconds int64) (timestamp, sign string) {
	timestamp = strconv.FormatInt(unixSeconds, 10)
	return timestamp, Sign(secret, timestamp, "GET", "/users/self/verify", "")
}

// credsOf reads OKX credentials from an AccountRef.
func credsOf(a *exchangev1.AccountRef) (*Credentials, error) {
	c := &Credentials{APIKey: a.GetApiKey(), Secret: a.GetApiSecret(), Passphrase: a.GetPassphrase()}
	if !c.Valid() {
		return nil, errNoAccount
	}
	return c, nil
}
