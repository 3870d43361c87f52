package sdk

import (
	"slices"
	"strings"
	"testing"
)

func TestPluginEnvIsAnAllowlist(t *testing.T) {
	host := []string{
		"PATH=/usr/bin", "HOME=/home/x", "TMPDIR=/tmp/x", "LC_ALL=C.UTF-8", "LANG=C",
		"EXHUB_STORE_DSN=postgres://u:secret@db/exhub", "EXHUB_KEK=base64key", "AWS_SECRET_ACCESS_KEY=s",
		"HTTPS_PROXY=http://proxy:3128", "PLUGIN_CLIENT_CERT=stale", "EXHUB_EXCHANGE_PLUGIN=stale",
	}
	env, err := PluginEnv(host, []string{"ENDPOINT=http://127.0.0.1:7001", "LANG=en_US.UTF-8"}, []string{"HTTPS_PROXY", "NOT_SET"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ENDPOINT=http://127.0.0.1:7001", "HOME=/home/x", "HTTPS_PROXY=http://proxy:3128", "LANG=en_US.UTF-8",
		"LC_ALL=C.UTF-8", "PATH=/usr/bin", "TMPDIR=/tmp/x"}
	if !slices.Equal(env, want) {
		t.Fatalf("env = %v\nwant  %v", env, want)
	}
	for _, bad := range []struct {
		explicit, allow []string
		want            string
	}{
		{allow: []string{"EXHUB_KEK"}, want: "hub's own"},
		{allow: []string{"exhub_store_dsn"}, want: "hub's own"},
		{explicit: []string{"EXHUB_STORE_DSN=x"}, want: "hub's own"},
		{explicit: []string{"PLUGIN_MIN_PORT=1"}, want: "handshake"},
		{allow: []string{"EXHUB_EXCHANGE_PLUGIN"}, want: "hub's own"},
		{explicit: []string{"NOVALUE"}, want: "NAME=value"},
		{allow: []string{"A-B"}, want: "not an environment variable name"},
	} {
		_, err := PluginEnv(host, bad.explicit, bad.allow)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("PluginEnv(%v, %v) = %v, want an error mentioning %q", bad.explicit, bad.allow, err, bad.want)
		}
	}
}
