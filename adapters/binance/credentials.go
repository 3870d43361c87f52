package binance

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// Credentials of one Binance API key.
type Credentials struct {
	APIKey    string
	APISecret string
}

// Valid reports whether both parts are present.
func (c Credentials) Valid() bool { return c.APIKey != "" && c.APISecret != "" }

// Sign returns the hex HMAC-SHA256 of payload with the secret: Binance's SIGNED request signature, where payload is
// the query string followed directly by the request body (when there is one).
func Sign(secret, payload string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(payload))
	return hex.EncodeToString(m.Sum(nil))
}
