package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/exhub/exhub/bff/internal/pluginhost"
)

func TestPluginEnvSettings(t *testing.T) {
	def, err := LoadWith("", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(def.Plugins.EnvAllow, pluginhost.DefaultEnvAllow) {
		t.Fatalf("default plugins.env_allow %v", def.Plugins.EnvAllow)
	}
	for _, e := range def.Exchanges {
		if len(e.Env) != 0 || len(e.EnvAllow) != 0 {
			t.Fatalf("demo exchanges need no plugin environment: %+v", e)
		}
	}
	p := write(t, t.TempDir(), "exhub.yaml", `
plugins:
  env_allow: [HTTPS_PROXY, SSL_KEYLOG_OFF]
exchanges:
  - key: 1
    slug: binance
    name: Binance
    plugin: binance
    env: ["BINANCE_REGION=eu", "EMPTY="]
    env_allow:
      - HTTPS_PROXY
      - GODEBUG
`)
	cfg, err := LoadWith(p, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Exchanges[0]
	if !slices.Equal(e.Env, []string{"BINANCE_REGION=eu", "EMPTY="}) {
		t.Fatalf("env %v", e.Env)
	}
	if got := cfg.PluginEnvAllow(e); !slices.Equal(got, []string{"HTTPS_PROXY", "SSL_KEYLOG_OFF", "GODEBUG"}) {
		t.Fatalf("PluginEnvAllow = %v", got)
	}
	cfg, err = LoadWith(p, envOf(map[string]string{"EXHUB_PLUGINS_ENV_ALLOW": "", "EXHUB_EXCHANGE_BINANCE_ENV_ALLOW": "A, B"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.PluginEnvAllow(cfg.Exchanges[0]); !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("PluginEnvAllow after overrides = %v", got)
	}

	for _, c := range []struct {
		yaml string
		env  map[string]string
		want []string
	}{
		{yaml: "plugins:\n  env_allow: [EXHUB_KEK]\n", want: []string{"plugins.env_allow[0]", "EXHUB_KEK"}},
		{yaml: "exchanges:\n  - {key: 1, slug: a, name: A, plugin: a, env_allow: [PATH, exhub_store_dsn]}\n",
			want: []string{"exchanges[0].env_allow[1]", "hub's own"}},
		{yaml: "exchanges:\n  - {key: 1, slug: a, name: A, plugin: a, env: [\"NOVALUE\", \"PLUGIN_MIN_PORT=1\", \"EXHUB_STORE_DSN=x\"]}\n",
			want: []string{"exchanges[0].env[0]", "exchanges[0].env[1]", "exchanges[0].env[2]"}},
		{yaml: "", env: map[string]string{"EXHUB_PLUGINS_ENV_ALLOW": "HTTPS_PROXY,EXHUB_STORE_DSN"}, want: []string{"plugins.env_allow[1]"}},
	} {
		p := write(t, t.TempDir(), "exhub.yaml", c.yaml)
		env := noEnv
		if c.env != nil {
			env = envOf(c.env)
		}
		_, err := LoadWith(p, env)
		if err == nil {
			t.Errorf("%q %v: no error", c.yaml, c.env)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not mention %q", c.yaml, err, w)
			}
		}
	}
}
