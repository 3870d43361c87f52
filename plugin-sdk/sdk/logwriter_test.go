package sdk

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
)

func TestPluginLogLinesKeepLevelMessageAndFields(t *testing.T) {
	var out bytes.Buffer
	w := &slogWriter{l: slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	in := `{"@level":"warn","@message":"upstream slow","@module":"plugin.binance","@timestamp":"2026-01-01T00:00:00Z","latency_ms":812}` + "\n"
	if n, err := w.Write([]byte(in)); err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if _, err := w.Write([]byte("panic: not json\n")); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	var first, second map[string]any
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&second); err != nil {
		t.Fatal(err)
	}
	if first["level"] != "WARN" || first["msg"] != "upstream slow" || first["module"] != "plugin.binance" || first["latency_ms"] != float64(812) {
		t.Errorf("structured line = %v", first)
	}
	if _, ok := first["@timestamp"]; ok {
		t.Errorf("hclog's own keys leaked: %v", first)
	}
	if second["msg"] != "plugin output" || second["line"] != "panic: not json" {
		t.Errorf("raw line = %v", second)
	}
}
