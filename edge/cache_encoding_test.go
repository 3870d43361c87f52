package edge_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// decode undoes a Content-Encoding the edge may send.
func decode(t *testing.T, encoding, body string) string {
	t.Helper()
	var r io.Reader
	switch encoding {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	default:
		t.Fatalf("unexpected Content-Encoding %q", encoding)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s body: %v", encoding, err)
	}
	return string(b)
}

// hitWith repeats a GET with the given Accept-Encoding until the cache answers it, for at most two seconds.
func hitWith(t *testing.T, e *edge, path, acceptEncoding string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for {
		r := e.get(t, path, "Accept-Encoding", acceptEncoding)
		if isHit(r) {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("GET %s (Accept-Encoding %q) never hit the cache; last Cache-Status %q", path, acceptEncoding,
				r.header.Get("Cache-Status"))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestEdgeCachesCompressedAnswers: compression of public market answers happens before the cache, so the cache keeps
// one answer per Accept-Encoding (zstd, gzip, none) and a hit goes out as stored, already compressed, instead of
// being compressed again for every request. Each client gets exactly the encoding it asked for, from the cache, and
// the BFF is asked once per encoding. With Valkey the stored variants are visible as keys.
func TestEdgeCachesCompressedAnswers(t *testing.T) {
	for _, store := range []string{"memory", "valkey"} {
		t.Run(store, func(t *testing.T) {
			valkey := ""
			if store == "valkey" {
				valkey = startValkey(t)
			}
			bff, kratos := newSizedBFF(t), newKratos(t)
			e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), valkey)
			const path = "/api/v1/tickers?size=20000&seed=42"
			want := string(pseudoJSON(42, 20000))
			for _, c := range []struct{ accept, encoding string }{
				{"gzip, deflate, br, zstd", "zstd"}, {"gzip", "gzip"}, {"", ""}, {"zstd", "zstd"},
			} {
				first := e.get(t, path, "Accept-Encoding", c.accept)
				hit := hitWith(t, e, path, c.accept)
				for what, r := range map[string]reply{"first": first, "hit": hit} {
					if got := r.header.Get("Content-Encoding"); got != c.encoding {
						t.Fatalf("Accept-Encoding %q, %s: Content-Encoding %q, want %q", c.accept, what, got, c.encoding)
					}
					if decode(t, c.encoding, r.body) != want {
						t.Fatalf("Accept-Encoding %q, %s: body differs from the BFF's", c.accept, what)
					}
					if !strings.Contains(r.header.Get("Vary"), "Accept-Encoding") {
						t.Errorf("Accept-Encoding %q, %s: Vary %q", c.accept, what, r.header.Get("Vary"))
					}
					if r.header.Get("Content-Security-Policy") == "" {
						t.Errorf("Accept-Encoding %q, %s: no Content-Security-Policy", c.accept, what)
					}
					assertSecurityHeaders(t, fmt.Sprintf("Accept-Encoding %q, %s", c.accept, what), r.header)
				}
				if c.encoding != "" && len(hit.body) >= len(want)/2 {
					t.Errorf("Accept-Encoding %q: cached %s body %d bytes for %d plain", c.accept, c.encoding, len(hit.body), len(want))
				}
			}
			// Four Accept-Encoding values, four stored answers (the list and "zstd" alone are different keys).
			if n := bff.count("/api/v1/tickers"); n != 4 {
				t.Errorf("the BFF answered %d times, want one per Accept-Encoding value (4)", n)
			}
			if valkey != "" {
				keys, err := valkeyKeys(valkey)
				if err != nil {
					t.Fatal(err)
				}
				for _, enc := range []string{"gzip", "zstd", ""} {
					if !strings.Contains(keys, "{-VARY-}Accept-Encoding:"+enc+"\n") {
						t.Errorf("no Valkey entry for Accept-Encoding %q in:\n%s", enc, keys)
					}
				}
			}
		})
	}
}

// valkeyKeys lists every key (KEYS *), one a line.
func valkeyKeys(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "KEYS *\r\n"); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line := func() (string, error) {
		l, err := r.ReadString('\n')
		return strings.TrimRight(l, "\r\n"), err
	}
	head, err := line()
	if err != nil || !strings.HasPrefix(head, "*") {
		return "", fmt.Errorf("KEYS: %q %v", head, err)
	}
	n, err := strconv.Atoi(head[1:])
	if err != nil {
		return "", fmt.Errorf("KEYS: %q", head)
	}
	var b strings.Builder
	for range n {
		if _, err := line(); err != nil { // $<length>
			return "", err
		}
		k, err := line()
		if err != nil {
			return "", err
		}
		b.WriteString(k + "\n")
	}
	return b.String(), nil
}
