package accounts

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/config/secret"
	"github.com/exhub/exhub/bff/internal/config/setting"
)

// Config is the `accounts` section. Zero values take the defaults of DefaultConfig (WithDefaults), so a file that
// leaves the section out gets them.
type Config struct {
	// ActiveKey is the id of the key-encryption key new records are sealed under (EXHUB_ACCOUNTS_ACTIVE_KEY).
	ActiveKey string `yaml:"active_key"`
	// Keys are key-encryption keys in the file: a list of {id, key}, key a base64 32-byte secret.
	Keys []KeyConfig `yaml:"keys"`
	// KeyRing holds the same as one secret, "id:base64[,id:base64...]", for the environment
	// (EXHUB_ACCOUNTS_KEY_RING or EXHUB_ACCOUNTS_KEY_RING_FILE). Merged with Keys; an id in both is an error.
	KeyRing secret.Secret `yaml:"key_ring"`
	// CallTimeout bounds one plugin call made for an account (CheckCredentials, a broker step).
	CallTimeout setting.Duration `yaml:"call_timeout"`
	// CacheSize is how many opened accounts (decrypted credentials) the trading path keeps in memory.
	CacheSize int `yaml:"cache_size"`
	// CacheTTL bounds how long an opened account is reused, so an unlink on another replica takes effect.
	CacheTTL setting.Duration `yaml:"cache_ttl"`
	// Broker is broker mode: sub-accounts made with the operator's master credentials.
	Broker BrokerConfig `yaml:"broker"`
}

// KeyConfig is one key-encryption key.
type KeyConfig struct {
	ID  string        `yaml:"id"`
	Key secret.Secret `yaml:"key"`
}

// BrokerConfig is broker mode.
type BrokerConfig struct {
	// Enabled provisions a sub-account per member on every exchange with master credentials.
	Enabled bool `yaml:"enabled"`
	// Credentials are the master credentials per exchange, one secret: "slug:key:secret[:passphrase]" separated
	// by commas (EXHUB_ACCOUNTS_BROKER_CREDENTIALS, EXHUB_ACCOUNTS_BROKER_CREDENTIALS_FILE).
	Credentials secret.Secret `yaml:"credentials"`
	// GrantAsset and GrantAmount fund every new sub-account from the master account (the demo faucet); an empty
	// amount grants nothing.
	GrantAsset  string `yaml:"grant_asset"`
	GrantAmount string `yaml:"grant_amount"`
	// QueueSize bounds the provisioning requests waiting for the provisioner.
	QueueSize int `yaml:"queue_size"`
}

// DefaultConfig: no keys (live mode then refuses to start), 10 s calls, 1000 opened accounts for 30 s, broker mode
// off with a 10000 USDT grant when it is on.
func DefaultConfig() Config {
	return Config{
		CallTimeout: setting.Duration(10 * time.Second),
		CacheSize:   1000,
		CacheTTL:    setting.Duration(30 * time.Second),
		Broker:      BrokerConfig{GrantAsset: "USDT", GrantAmount: "10000", QueueSize: 1024},
	}
}

// WithDefaults fills zero values from DefaultConfig.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.CallTimeout == 0 {
		c.CallTimeout = d.CallTimeout
	}
	if c.CacheSize == 0 {
		c.CacheSize = d.CacheSize
	}
	if c.CacheTTL == 0 {
		c.CacheTTL = d.CacheTTL
	}
	if c.Broker.GrantAsset == "" && c.Broker.GrantAmount == "" {
		c.Broker.GrantAsset, c.Broker.GrantAmount = d.Broker.GrantAsset, d.Broker.GrantAmount
	}
	if c.Broker.QueueSize == 0 {
		c.Broker.QueueSize = d.Broker.QueueSize
	}
	return c
}

// HasKeys reports whether any key-encryption key is configured.
func (c Config) HasKeys() bool { return len(c.Keys) > 0 || !c.KeyRing.IsZero() }

// Validate checks the section; errors name keys relative to it. Keys are optional here: Require says whether a
// mode needs them.
func (c Config) Validate() error {
	var p setting.Problems
	c = c.WithDefaults()
	if _, err := c.keys(); err != nil {
		p.Add("keys", "%v", err)
	} else if c.HasKeys() && c.ActiveKey == "" {
		p.Add("active_key", "is required when keys are set")
	}
	p.Positive(setting.KeyDuration{Key: "call_timeout", D: c.CallTimeout}, setting.KeyDuration{Key: "cache_ttl", D: c.CacheTTL})
	if c.CacheSize < 1 || c.CacheSize > 1_000_000 {
		p.Add("cache_size", "must be between 1 and 1000000, got %d", c.CacheSize)
	}
	if c.Broker.QueueSize < 1 || c.Broker.QueueSize > 1_000_000 {
		p.Add("broker.queue_size", "must be between 1 and 1000000, got %d", c.Broker.QueueSize)
	}
	if c.Broker.GrantAmount != "" {
		if d, err := decimal.NewFromString(c.Broker.GrantAmount); err != nil || d.IsNegative() {
			p.Add("broker.grant_amount", "%q is not a non-negative decimal", c.Broker.GrantAmount)
		}
		if strings.TrimSpace(c.Broker.GrantAsset) == "" {
			p.Add("broker.grant_asset", "is required with broker.grant_amount")
		}
	}
	if _, err := c.Broker.masters(); err != nil {
		p.Add("broker.credentials", "%v", err)
	}
	return p.Err()
}

// Require is the start-up check of a mode that needs accounts: without a key it names what to set.
func (c Config) Require() error {
	if !c.HasKeys() {
		return fmt.Errorf("config: accounts.key_ring: exchange accounts need a key-encryption key: set " +
			"EXHUB_ACCOUNTS_KEY_RING_FILE (a file holding id:base64-of-32-random-bytes) and EXHUB_ACCOUNTS_ACTIVE_KEY " +
			"to that id, or accounts.keys and accounts.active_key in the file")
	}
	return nil
}

// Keyring builds the keyring from the configured keys.
func (c Config) Keyring() (*Keyring, error) {
	keys, err := c.keys()
	if err != nil {
		return nil, fmt.Errorf("config: accounts.keys: %w", err)
	}
	if len(keys) == 0 {
		return nil, c.Require()
	}
	k, err := NewKeyring(c.ActiveKey, keys)
	if err != nil {
		return nil, fmt.Errorf("config: accounts.active_key: %w", err)
	}
	return k, nil
}

func (c Config) keys() (map[string][]byte, error) {
	out := map[string][]byte{}
	add := func(where, id, key string) error {
		if err := validKeyID(id); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if _, dup := out[id]; dup {
			return fmt.Errorf("%s: key id %q given twice", where, id)
		}
		raw, err := DecodeKey(key)
		if err != nil {
			return fmt.Errorf("%s: key %q %v", where, id, err)
		}
		out[id] = raw
		return nil
	}
	for i, k := range c.Keys {
		if err := add(setting.ListKey("keys", i), k.ID, k.Key.Reveal()); err != nil {
			return nil, err
		}
	}
	for i, item := range strings.Split(c.KeyRing.Reveal(), ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, key, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("key_ring item %d is not id:base64", i+1)
		}
		if err := add(fmt.Sprintf("key_ring item %d", i+1), strings.TrimSpace(id), key); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// masters parses the master credentials per exchange slug.
func (b BrokerConfig) masters() (map[string]Credentials, error) {
	out := map[string]Credentials{}
	for i, item := range strings.Split(b.Credentials.Reveal(), ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := strings.Split(item, ":")
		if len(parts) < 3 || len(parts) > 4 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return nil, fmt.Errorf("item %d is not slug:key:secret[:passphrase]", i+1)
		}
		if _, dup := out[parts[0]]; dup {
			return nil, fmt.Errorf("exchange %q given twice", parts[0])
		}
		c := Credentials{Key: secret.New(parts[1]), Secret: secret.New(parts[2])}
		if len(parts) == 4 {
			c.Passphrase = secret.New(parts[3])
		}
		out[parts[0]] = c
	}
	return out, nil
}
