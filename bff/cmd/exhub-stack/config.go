package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// Config holds where everything is and which loopback ports it uses. Every value has an EXHUB_* override so two
// stacks can run side by side.
type Config struct {
	Root    string
	BinDir  string
	DataDir string

	EdgeAddr         string
	BFFAddr          string
	KratosPublicAddr string
	KratosAdminAddr  string
	MailpitSMTPAddr  string // the demo inbox's SMTP listener: Kratos' courier sends mail here
	MailpitAddr      string // the demo inbox's HTTP API: SMS arrive here, the edge serves it at /demo/inbox/api/
	CHNativePort     string
	CHHTTPPort       string
	AnalyticsDB      string // the BFF's analytics database, the one the read-only ClickHouse user may read
	ValkeyPort       string
	BinanceEmuAddr   string
	OKXEmuAddr       string

	NoValkey bool
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

func defaultConfig(root string) Config {
	return Config{
		Root:             root,
		BinDir:           env("EXHUB_BIN_DIR", filepath.Join(root, "bin")),
		DataDir:          env("EXHUB_DATA_DIR", filepath.Join(root, ".data")),
		EdgeAddr:         env("EXHUB_EDGE_ADDR", "127.0.0.1:8080"),
		BFFAddr:          env("EXHUB_HTTP_ADDR", "127.0.0.1:8090"),
		KratosPublicAddr: env("EXHUB_KRATOS_PUBLIC_ADDR", "127.0.0.1:4433"),
		KratosAdminAddr:  env("EXHUB_KRATOS_ADMIN_ADDR", "127.0.0.1:4434"),
		MailpitSMTPAddr:  env("EXHUB_MAILPIT_SMTP_ADDR", "127.0.0.1:1025"),
		MailpitAddr:      env("EXHUB_MAILPIT_ADDR", "127.0.0.1:8025"),
		CHNativePort:     env("EXHUB_CLICKHOUSE_TCP_PORT", "9000"),
		CHHTTPPort:       env("EXHUB_CLICKHOUSE_HTTP_PORT", "8123"),
		AnalyticsDB:      env("EXHUB_ANALYTICS_DATABASE", "exhub"),
		ValkeyPort:       env("EXHUB_VALKEY_PORT", "6379"),
		BinanceEmuAddr:   env("EXHUB_EMULATOR_BINANCE_ADDR", "127.0.0.1:7001"),
		OKXEmuAddr:       env("EXHUB_EMULATOR_OKX_ADDR", "127.0.0.1:7002"),
	}
}

// PublicURL is the one URL a user opens.
func (c Config) PublicURL() string { return "http://" + c.EdgeAddr }

// Origins are the browser origins of the edge: its address, and localhost for a loopback address (the same site).
func (c Config) Origins() []string {
	o := []string{c.PublicURL()}
	if h, p, err := net.SplitHostPort(c.EdgeAddr); err == nil && h == "127.0.0.1" {
		o = append(o, "http://localhost:"+p)
	}
	return o
}

// InboxURL is the UI's demo inbox page, which shows the e-mail and SMS (with their codes) Kratos sent.
func (c Config) InboxURL() string { return c.PublicURL() + "/inbox" }

func (c Config) bin(name string) string { return filepath.Join(c.BinDir, name) }

func (c Config) data(name string) string { return filepath.Join(c.DataDir, name) }

func (c Config) chHTTP() string   { return "127.0.0.1:" + c.CHHTTPPort }
func (c Config) chNative() string { return "127.0.0.1:" + c.CHNativePort }
func (c Config) valkey() string   { return "127.0.0.1:" + c.ValkeyPort }

// ports lists every address the stack will listen on, with the service that owns it.
func (c Config) ports() [][2]string {
	p := [][2]string{
		{"clickhouse (native)", c.chNative()},
		{"clickhouse (http)", c.chHTTP()},
		{"kratos (public)", c.KratosPublicAddr},
		{"kratos (admin)", c.KratosAdminAddr},
		{"mailpit (smtp)", c.MailpitSMTPAddr},
		{"mailpit (http)", c.MailpitAddr},
		{"binance emulator", c.BinanceEmuAddr},
		{"okx emulator", c.OKXEmuAddr},
		{"bff", c.BFFAddr},
		{"edge", c.EdgeAddr},
	}
	if !c.NoValkey {
		p = append(p, [2]string{"valkey", c.valkey()})
	}
	return p
}

func (c Config) String() string {
	return fmt.Sprintf("edge=%s bff=%s kratos=%s/%s mailpit=%s/%s clickhouse=%s/%s valkey=%s emulators=%s,%s", c.EdgeAddr, c.BFFAddr,
		c.KratosPublicAddr, c.KratosAdminAddr, c.MailpitSMTPAddr, c.MailpitAddr, c.CHNativePort, c.CHHTTPPort, c.ValkeyPort,
		c.BinanceEmuAddr, c.OKXEmuAddr)
}

// analystHint tells how to open a read-only ClickHouse session on the stack's analytics data.
func (c Config) analystHint() string {
	pw := "analyst (the demo password; set EXHUB_CLICKHOUSE_ANALYST_PASSWORD for another)"
	if _, ok := os.LookupEnv("EXHUB_CLICKHOUSE_ANALYST_PASSWORD"); ok {
		pw = "$EXHUB_CLICKHOUSE_ANALYST_PASSWORD"
	}
	return fmt.Sprintf("ClickHouse, read-only: clickhouse-client --host 127.0.0.1 --port %s --user analyst --database %s, password %s",
		c.CHNativePort, c.AnalyticsDB, pw)
}
