package accounts

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/exhub/exhub/bff/internal/config/secret"
)

func testKeyring(t *testing.T, active string, ids ...string) *Keyring {
	t.Helper()
	keys := map[string][]byte{}
	for _, id := range ids {
		raw, err := DecodeKey(NewKey())
		if err != nil {
			t.Fatal(err)
		}
		keys[id] = raw
	}
	k, err := NewKeyring(active, keys)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func creds(key, sec, pass string) Credentials {
	return Credentials{Key: secret.New(key), Secret: secret.New(sec), Passphrase: secret.New(pass)}
}

func TestSealRoundTripAndBinding(t *testing.T) {
	k := testKeyring(t, "k1", "k1")
	b := Binding{MemberID: "m1", AccountID: "a1", Exchange: "okx"}
	c := creds("KEY-0123456789", "SECRET-abcdef", "pass phrase")
	kek, blob, err := k.Seal(c, b)
	if err != nil || kek != "k1" {
		t.Fatalf("seal: %q %v", kek, err)
	}
	for _, plain := range []string{"KEY-0123456789", "SECRET-abcdef", "pass phrase"} {
		if strings.Contains(blob, plain) {
			t.Fatalf("blob holds %q in the clear", plain)
		}
	}
	got, err := k.Open(kek, blob, b)
	if err != nil || got.Key.Reveal() != "KEY-0123456789" || got.Secret.Reveal() != "SECRET-abcdef" || got.Passphrase.Reveal() != "pass phrase" {
		t.Fatalf("open: %v", err)
	}
	// Two seals of the same credentials differ (random nonce).
	_, blob2, _ := k.Seal(c, b)
	if blob2 == blob {
		t.Fatal("two seals are identical: the nonce is not random")
	}
	// A row copied to another member, account or exchange does not open.
	for _, other := range []Binding{
		{MemberID: "m2", AccountID: "a1", Exchange: "okx"},
		{MemberID: "m1", AccountID: "a2", Exchange: "okx"},
		{MemberID: "m1", AccountID: "a1", Exchange: "binance"},
		// Length prefixes: moving characters between fields is another binding.
		{MemberID: "m1a", AccountID: "1", Exchange: "okx"},
	} {
		if _, err := k.Open(kek, blob, other); !errors.Is(err, ErrSealed) {
			t.Errorf("opened for %+v: %v", other, err)
		}
	}
	// A changed byte does not open.
	raw, _ := base64.StdEncoding.DecodeString(blob)
	raw[len(raw)-1] ^= 1
	if _, err := k.Open(kek, base64.StdEncoding.EncodeToString(raw), b); !errors.Is(err, ErrSealed) {
		t.Errorf("tampered blob: %v", err)
	}
	if _, err := k.Open(kek, "not base64!", b); !errors.Is(err, ErrSealed) {
		t.Errorf("garbage: %v", err)
	}
	// Another keyring with the same id but another key does not open it; an unknown id is named.
	if _, err := testKeyring(t, "k1", "k1").Open(kek, blob, b); !errors.Is(err, ErrSealed) {
		t.Errorf("other key: %v", err)
	}
	if _, err := k.Open("k9", blob, b); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
	// Credentials never print.
	if s := fmt.Sprintf("%v %+v %#v", c, c, c); strings.Contains(s, "KEY-0123456789") || strings.Contains(s, "SECRET") {
		t.Fatalf("credentials print: %s", s)
	}
	if c.Last4() != "6789" || creds("ab", "", "").Last4() != "ab" {
		t.Fatalf("last4 %q", c.Last4())
	}
}

func TestKeyRotation(t *testing.T) {
	raw1, _ := DecodeKey(NewKey())
	raw2, _ := DecodeKey(NewKey())
	old, err := NewKeyring("k1", map[string][]byte{"k1": raw1})
	if err != nil {
		t.Fatal(err)
	}
	b := Binding{MemberID: "m", AccountID: "a", Exchange: "binance"}
	kek, blob, _ := old.Seal(creds("K", "S", ""), b)
	both, err := NewKeyring("k2", map[string][]byte{"k1": raw1, "k2": raw2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := both.Open(kek, blob, b); err != nil {
		t.Fatalf("old record under the new keyring: %v", err)
	}
	kek2, blob2, err := both.Reseal(kek, blob, b)
	if err != nil || kek2 != "k2" {
		t.Fatalf("reseal: %q %v", kek2, err)
	}
	if _, err := old.Open(kek2, blob2, b); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("old keyring opened a k2 record: %v", err)
	}
	if c, err := both.Open(kek2, blob2, b); err != nil || c.Key.Reveal() != "K" {
		t.Fatalf("resealed: %v", err)
	}
}

func TestKeyringAndConfigValidation(t *testing.T) {
	good := NewKey()
	if _, err := NewKeyring("k1", map[string][]byte{"k1": make([]byte, 16)}); err == nil {
		t.Error("16-byte key accepted")
	}
	if _, err := NewKeyring("k2", map[string][]byte{"k1": make([]byte, 32)}); err == nil {
		t.Error("active key missing accepted")
	}
	if _, err := NewKeyring("bad id", map[string][]byte{"bad id": make([]byte, 32)}); err == nil {
		t.Error("key id with a space accepted")
	}
	c := Config{ActiveKey: "k2", Keys: []KeyConfig{{ID: "k1", Key: secret.New(good)}}, KeyRing: secret.New("k2:" + NewKey())}
	k, err := c.Keyring()
	if err != nil || k.Active() != "k2" || strings.Join(k.IDs(), ",") != "k1,k2" {
		t.Fatalf("keyring from config: %v %v", k, err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]Config{
		"dup":        {ActiveKey: "k1", Keys: []KeyConfig{{ID: "k1", Key: secret.New(good)}}, KeyRing: secret.New("k1:" + good)},
		"short":      {ActiveKey: "k1", KeyRing: secret.New("k1:" + base64.StdEncoding.EncodeToString(make([]byte, 31)))},
		"not base64": {ActiveKey: "k1", KeyRing: secret.New("k1:%%%")},
		"no colon":   {ActiveKey: "k1", KeyRing: secret.New(good)},
		"no active":  {Keys: []KeyConfig{{ID: "k1", Key: secret.New(good)}}},
		"grant":      {Broker: BrokerConfig{GrantAsset: "USDT", GrantAmount: "-1"}},
		"masters":    {Broker: BrokerConfig{Credentials: secret.New("binance:onlykey")}},
	} {
		err := bad.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		// The key material never appears in a message.
		if strings.Contains(err.Error(), good) {
			t.Errorf("%s: error shows the key: %v", name, err)
		}
	}
	if err := (Config{}).Require(); err == nil || !strings.Contains(err.Error(), "EXHUB_ACCOUNTS_KEY_RING_FILE") {
		t.Fatalf("require without keys: %v", err)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	m, err := (BrokerConfig{Credentials: secret.New("binance:K1:S1, okx:K2:S2:P2")}).Masters()
	if err != nil || m["okx"].Passphrase.Reveal() != "P2" || m["binance"].Secret.Reveal() != "S1" || len(m) != 2 {
		t.Fatalf("masters %v %v", m, err)
	}
}
