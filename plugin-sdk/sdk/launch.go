package sdk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// LaunchConfig says how to start one plugin binary.
type LaunchConfig struct {
	// Path of the plugin executable.
	Path string
	Args []string
	// Env holds explicit "NAME=value" entries for the plugin's environment. The plugin never inherits the host's
	// environment: it gets BaseEnv (the host's values of those names), the names in EnvAllow, and Env, which wins
	// over both. go-plugin adds its own handshake variables (PLUGIN_*, the magic cookie).
	Env []string
	// EnvAllow names host variables passed through with the host's value when set (e.g. HTTPS_PROXY). Names that
	// start with EXHUB_ (the hub's own settings and secrets) or PLUGIN_ (go-plugin's) are refused.
	EnvAllow []string
	// SHA256, hex encoded, when set, must match the binary or the launch fails.
	SHA256 string
	// StartTimeout bounds the handshake; 0 means 10 s.
	StartTimeout time.Duration
	// Logger receives the plugin's log lines; nil discards them.
	Logger *slog.Logger
}

// Plugin is one running plugin process and its typed client.
type Plugin struct {
	client   *plugin.Client
	Exchange exchangev1.ExchangeClient
	// Protocol is the negotiated protocol version.
	Protocol int
	pid      int
}

// Launch starts the plugin, completes the handshake (AutoMTLS on) and returns its client. The caller owns the
// process and must Kill it.
func Launch(ctx context.Context, cfg LaunchConfig) (*Plugin, error) {
	if cfg.Path == "" {
		return nil, errors.New("plugin path is empty")
	}
	st, err := os.Stat(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w (build it with `make plugins`)", cfg.Path, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("plugin %s is not an executable file", cfg.Path)
	}
	var secure *plugin.SecureConfig
	if cfg.SHA256 != "" {
		sum, err := hex.DecodeString(cfg.SHA256)
		if err != nil || len(sum) != sha256.Size {
			return nil, fmt.Errorf("plugin %s: sha256 %q is not 64 hex digits", cfg.Path, cfg.SHA256)
		}
		secure = &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	}
	timeout := cfg.StartTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	env, err := PluginEnv(os.Environ(), cfg.Env, cfg.EnvAllow)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", cfg.Path, err)
	}
	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Env = env
	c := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: VersionedPlugins(nil),
		Cmd:              cmd,
		SecureConfig:     secure,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     timeout,
		Logger:           hclogFor(cfg.Logger),
		SyncStdout:       io.Discard,
		SyncStderr:       io.Discard,
		// The process gets cmd.Env and go-plugin's handshake variables, never the host's whole environment.
		SkipHostEnv: true,
		// No call is ever sent twice by the transport: an order placed, a transfer or a withdrawal that may have
		// reached the plugin is resolved by client id, not re-sent (see OutcomeOf).
		GRPCDialOptions: []grpc.DialOption{grpc.WithDisableRetry()},
	})
	done := make(chan struct{})
	var (
		p       *Plugin
		lastErr error
	)
	go func() { // owned by Launch: it ends when the handshake ends, one way or the other
		defer close(done)
		rpc, err := c.Client()
		if err != nil {
			lastErr = err
			return
		}
		raw, err := rpc.Dispense(PluginName)
		if err != nil {
			lastErr = err
			return
		}
		ex, ok := raw.(exchangev1.ExchangeClient)
		if !ok {
			lastErr = fmt.Errorf("plugin dispensed %T, not an exchange client", raw)
			return
		}
		pid := 0
		if rc := c.ReattachConfig(); rc != nil {
			pid = rc.Pid
		}
		p = &Plugin{client: c, Exchange: ex, Protocol: c.NegotiatedVersion(), pid: pid}
	}()
	select {
	case <-done:
	case <-ctx.Done():
		c.Kill()
		<-done
		return nil, ctx.Err()
	}
	if lastErr != nil {
		c.Kill()
		if errors.Is(lastErr, plugin.ErrChecksumsDoNotMatch) {
			return nil, fmt.Errorf("plugin %s: SHA-256 of the binary does not match the configured checksum", cfg.Path)
		}
		return nil, fmt.Errorf("plugin %s: %w", cfg.Path, lastErr)
	}
	return p, nil
}

// Exited reports whether the plugin process has ended.
func (p *Plugin) Exited() bool { return p.client.Exited() }

// Pid is the plugin's process id.
func (p *Plugin) Pid() int { return p.pid }

// Kill ends the plugin: a graceful close first, then a kill after a short grace period. Safe to call twice.
func (p *Plugin) Kill() { p.client.Kill() }

// hclogFor routes go-plugin's logs (and the plugin's own stderr lines) into slog.
func hclogFor(l *slog.Logger) hclog.Logger {
	if l == nil {
		return hclog.NewNullLogger()
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       "plugin",
		Level:      hclog.Info,
		Output:     &slogWriter{l: l},
		JSONFormat: true,
	})
}

// slogWriter turns each hclog JSON line (go-plugin's own logs and the plugin's stderr, which go-plugin re-logs) into
// one slog record with the plugin's level, message and fields. A line that is not JSON is kept whole.
type slogWriter struct{ l *slog.Logger }

func (w *slogWriter) Write(b []byte) (int, error) {
	line := bytes.TrimRight(b, "\r\n")
	if len(line) == 0 {
		return len(b), nil
	}
	var rec map[string]any
	if err := json.Unmarshal(line, &rec); err != nil {
		w.l.Info("plugin output", "line", string(line))
		return len(b), nil
	}
	level := slog.LevelInfo
	switch rec["@level"] {
	case "trace", "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	msg, _ := rec["@message"].(string)
	attrs := make([]slog.Attr, 0, len(rec))
	if m, ok := rec["@module"].(string); ok && m != "" {
		attrs = append(attrs, slog.String("module", m))
	}
	keys := make([]string, 0, len(rec))
	for k := range rec {
		if !strings.HasPrefix(k, "@") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		attrs = append(attrs, slog.Any(k, rec[k]))
	}
	w.l.LogAttrs(context.Background(), level, msg, attrs...)
	return len(b), nil
}
