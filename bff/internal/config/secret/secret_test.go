package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const value = "hunter2-p@ss"

type holder struct {
	Name   string `json:"name" yaml:"name"`
	DSN    Secret `json:"dsn" yaml:"dsn"`
	hidden Secret
	Ptr    *Secret `json:"ptr" yaml:"ptr"`
}

func newHolder() holder {
	s := New(value)
	return holder{Name: "db", DSN: New(value), hidden: New(value), Ptr: &s}
}

func noValue(t *testing.T, what, out string) {
	t.Helper()
	if strings.Contains(out, value) || strings.Contains(out, "hunter2") {
		t.Fatalf("%s printed the secret: %s", what, out)
	}
	if !strings.Contains(out, Redacted) {
		t.Fatalf("%s does not show %s: %s", what, Redacted, out)
	}
}

func TestRevealReturnsTheValue(t *testing.T) {
	if got := New(value).Reveal(); got != value {
		t.Fatalf("Reveal = %q", got)
	}
	var zero Secret
	if zero.Reveal() != "" || !zero.IsZero() || New(value).IsZero() {
		t.Fatal("zero value")
	}
}

func TestFmtNeverPrints(t *testing.T) {
	s, h := New(value), newHolder()
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10s", "%d"} {
		noValue(t, "fmt "+verb, fmt.Sprintf(verb, s))
		noValue(t, "fmt "+verb+" pointer", fmt.Sprintf(verb, &s))
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		noValue(t, "fmt "+verb+" struct", fmt.Sprintf(verb, h))
		noValue(t, "fmt "+verb+" struct pointer", fmt.Sprintf(verb, &h))
		noValue(t, "fmt "+verb+" slice", fmt.Sprintf(verb, []Secret{s}))
		noValue(t, "fmt "+verb+" map", fmt.Sprintf(verb, map[string]Secret{"k": s}))
	}
	noValue(t, "String", s.String())
	noValue(t, "GoString", s.GoString())
	noValue(t, "Sprint", fmt.Sprint(s, h))
	noValue(t, "Sprintln", fmt.Sprintln(s, h))
	noValue(t, "error wrap", fmt.Errorf("open %v: %w", s, fmt.Errorf("x")).Error())
}

func TestSlogNeverPrints(t *testing.T) {
	for name, newHandler := range map[string]func(*bytes.Buffer) slog.Handler{
		"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
	} {
		var b bytes.Buffer
		log := slog.New(newHandler(&b))
		log.Info("start", "dsn", New(value), "cfg", newHolder(), slog.Any("ptr", new(New(value))))
		noValue(t, "slog "+name, b.String())
	}
}

func TestJSONAndYAMLNeverPrint(t *testing.T) {
	b, err := json.Marshal(newHolder())
	if err != nil {
		t.Fatal(err)
	}
	noValue(t, "json", string(b))
	y, err := yaml.Marshal(newHolder())
	if err != nil {
		t.Fatal(err)
	}
	noValue(t, "yaml", string(y))
	tx, err := New(value).MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	noValue(t, "text", string(tx))
}

func TestEmptySecretPrintsEmpty(t *testing.T) {
	var s Secret
	if got := fmt.Sprintf("%v|%s", s, s); got != "|" {
		t.Fatalf("empty secret prints %q", got)
	}
}

func TestYAMLDecodes(t *testing.T) {
	var h struct {
		DSN Secret `yaml:"dsn"`
	}
	if err := yaml.Unmarshal([]byte("dsn: "+value+"\n"), &h); err != nil {
		t.Fatal(err)
	}
	if h.DSN.Reveal() != value {
		t.Fatalf("decoded %q", h.DSN.Reveal())
	}
	if err := yaml.Unmarshal([]byte("dsn: [a, b]\n"), &h); err == nil {
		t.Fatal("a list decoded as a secret")
	}
	var s Secret
	if err := s.UnmarshalText([]byte(value)); err != nil || s.Reveal() != value {
		t.Fatalf("UnmarshalText: %v %q", err, s.Reveal())
	}
}
