package trading

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/exhub/exhub/bff/internal/config/setting"
)

func TestConfig(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	c := Defaults()
	if err := yaml.Unmarshal([]byte("call_timeout: 5s\nsent_stale: 4s\nresolve_max: 1ms\ntick: 0s\n"), &c); err != nil {
		t.Fatal(err)
	}
	if c.CallTimeout.D() != 5*time.Second {
		t.Fatalf("call_timeout decoded as %s", c.CallTimeout.D())
	}
	err := c.Validate()
	for _, key := range []string{"sent_stale", "resolve_max", "tick"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Fatalf("validation does not name %s: %v", key, err)
		}
	}
	c = Defaults()
	c.IdempotencyWait = setting.Duration(0)
	if _, err := New(c, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "idempotency_wait") {
		t.Fatalf("New with a bad config: %v", err)
	}
}
