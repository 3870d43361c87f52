package accounts

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/exhub/exhub/bff/internal/config/secret"
)

// KeySize is the length of a key-encryption key: AES-256.
const KeySize = 32

// sealVersion is the first byte of every sealed blob: the layout below. A new layout gets a new version.
const sealVersion byte = 1

// adLabel starts the associated data, so a blob sealed for another purpose with the same key never opens here.
const adLabel = "exhub.accounts.credentials.v1"

// ErrSealed: a sealed record does not open (wrong key, another member's or account's row, a changed blob).
var ErrSealed = errors.New("sealed credentials do not open")

// ErrUnknownKey: a record names a key-encryption key the keyring does not hold.
var ErrUnknownKey = errors.New("unknown key-encryption key")

// Binding is what a sealed record is bound to (its associated data): a blob copied to another member, account or
// exchange fails to open.
type Binding struct {
	MemberID  string
	AccountID string
	Exchange  string
}

// ad encodes the binding without ambiguity: each field length-prefixed after a fixed label.
func (b Binding) ad() []byte {
	out := make([]byte, 0, len(adLabel)+len(b.MemberID)+len(b.AccountID)+len(b.Exchange)+16)
	out = append(out, adLabel...)
	for _, f := range []string{b.MemberID, b.AccountID, b.Exchange} {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return out
}

// Credentials are an API key with its secret and passphrase. They never print (secret.Secret).
type Credentials struct {
	Key        secret.Secret
	Secret     secret.Secret
	Passphrase secret.Secret
}

// Last4 is the key's last four characters, the only part ever shown.
func (c Credentials) Last4() string {
	k := []rune(c.Key.Reveal())
	if len(k) <= 4 {
		return string(k)
	}
	return string(k[len(k)-4:])
}

// sealedCredentials is the plaintext of a sealed record.
type sealedCredentials struct {
	Key        string `json:"k"`
	Secret     string `json:"s"`
	Passphrase string `json:"p,omitempty"`
}

// Keyring holds the key-encryption keys by id and seals new records under the active one. Old keys stay to open
// records not yet re-encrypted (exhub-admin accounts rekey).
type Keyring struct {
	active string
	aeads  map[string]cipher.AEAD
}

// NewKeyring builds a keyring from raw 32-byte keys; active must be one of them.
func NewKeyring(active string, keys map[string][]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("accounts: no key-encryption key")
	}
	k := &Keyring{active: active, aeads: make(map[string]cipher.AEAD, len(keys))}
	for id, raw := range keys {
		if err := validKeyID(id); err != nil {
			return nil, err
		}
		if len(raw) != KeySize {
			return nil, fmt.Errorf("accounts: key %q is %d bytes, want %d", id, len(raw), KeySize)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("accounts: key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("accounts: key %q: %w", id, err)
		}
		k.aeads[id] = aead
	}
	if _, ok := k.aeads[active]; !ok {
		return nil, fmt.Errorf("accounts: active key %q is not among the keys (%s)", active, strings.Join(k.IDs(), ", "))
	}
	return k, nil
}

// Active is the id of the key new records are sealed under.
func (k *Keyring) Active() string { return k.active }

// IDs lists the key ids, sorted.
func (k *Keyring) IDs() []string {
	ids := make([]string, 0, len(k.aeads))
	for id := range k.aeads {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Seal encrypts c under the active key, bound to b. It returns the key id and the blob (version, random nonce,
// ciphertext with tag), base64 for a TEXT column.
func (k *Keyring) Seal(c Credentials, b Binding) (kekID, blob string, err error) {
	plain, err := json.Marshal(sealedCredentials{Key: c.Key.Reveal(), Secret: c.Secret.Reveal(), Passphrase: c.Passphrase.Reveal()})
	if err != nil {
		return "", "", fmt.Errorf("accounts: seal: %w", err)
	}
	defer clear(plain)
	aead := k.aeads[k.active]
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return "", "", fmt.Errorf("accounts: nonce: %w", err)
	}
	out = aead.Seal(out, out[1:1+aead.NonceSize()], plain, b.ad())
	return k.active, base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts a blob sealed under kekID for b. ErrUnknownKey when the keyring lacks kekID, ErrSealed when the
// blob does not open for b.
func (k *Keyring) Open(kekID, blob string, b Binding) (Credentials, error) {
	aead, ok := k.aeads[kekID]
	if !ok {
		return Credentials{}, fmt.Errorf("accounts: %w %q", ErrUnknownKey, kekID)
	}
	raw, err := base64.StdEncoding.DecodeString(blob)
	if err != nil || len(raw) < 1+aead.NonceSize()+aead.Overhead() || raw[0] != sealVersion {
		return Credentials{}, fmt.Errorf("accounts: %w: malformed blob", ErrSealed)
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, raw[1:1+n], raw[1+n:], b.ad())
	if err != nil {
		return Credentials{}, fmt.Errorf("accounts: %w", ErrSealed)
	}
	defer clear(plain)
	var sc sealedCredentials
	if err := json.Unmarshal(plain, &sc); err != nil {
		return Credentials{}, fmt.Errorf("accounts: %w: bad plaintext", ErrSealed)
	}
	return Credentials{Key: secret.New(sc.Key), Secret: secret.New(sc.Secret), Passphrase: secret.New(sc.Passphrase)}, nil
}

// Reseal opens a blob and seals it again under the active key (rotation). A blob already under the active key is
// sealed again too (a fresh nonce); callers skip those.
func (k *Keyring) Reseal(kekID, blob string, b Binding) (newKEK, newBlob string, err error) {
	c, err := k.Open(kekID, blob, b)
	if err != nil {
		return "", "", err
	}
	return k.Seal(c, b)
}

func validKeyID(id string) error {
	if id == "" || len(id) > 32 {
		return fmt.Errorf("accounts: key id %q must be 1 to 32 characters", id)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("accounts: key id %q: only letters, digits, '-', '_' and '.'", id)
		}
	}
	return nil
}

// DecodeKey reads a base64 (standard or URL alphabet, padded or not) 32-byte key.
func DecodeKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("decodes to %d bytes, want %d", len(b), KeySize)
			}
			return b, nil
		}
	}
	return nil, errors.New("is not base64")
}

// NewKey returns a fresh random key, base64 (standard alphabet), for configuration.
func NewKey() string {
	b := make([]byte, KeySize)
	_, _ = rand.Read(b) // never fails (crypto/rand panics on its own failure)
	return base64.StdEncoding.EncodeToString(b)
}
