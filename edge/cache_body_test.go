package edge_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// pseudoJSON returns n bytes of JSON-looking text that differ for every seed, so a body mixed up with another one
// (or with a reused buffer) cannot go unnoticed.
func pseudoJSON(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b bytes.Buffer
	b.WriteString(`{"tickers":[`)
	for i := 0; b.Len() < n-64; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"s":"S%dUSDT","p":"%d.%04d","v":"%d"}`, r.IntN(100000), r.IntN(90000), r.IntN(10000), r.Uint64())
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// newSizedBFF answers /api/v1/tickers?size=N&seed=S with a cacheable body of about N bytes; the body of each URL
// is fixed, so every copy served from the cache must equal the first answer byte for byte.
func newSizedBFF(t *testing.T) *upstream {
	u := &upstream{hits: map[string]*atomic.Int64{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/tickers", func(w http.ResponseWriter, r *http.Request) {
		u.hit(r.URL.Path)
		size, err := strconv.Atoi(r.URL.Query().Get("size"))
		if err != nil {
			http.Error(w, "size", http.StatusBadRequest)
			return
		}
		seed, _ := strconv.ParseUint(r.URL.Query().Get("seed"), 10, 64)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=30")
		_, _ = w.Write(pseudoJSON(seed, size))
	})
	u.srv = httptest.NewServer(mux)
	t.Cleanup(u.srv.Close)
	return u
}

// TestEdgeCachedBodiesIntact: bodies from a few hundred bytes to several MiB (beyond one 4 MiB compression block),
// stored in Valkey or in memory, come back from the cache byte for byte, also under concurrent hits on different
// entries. A cache layer that decompresses into a shared or recycled buffer fails here.
func TestEdgeCachedBodiesIntact(t *testing.T) {
	for _, store := range []string{"valkey", "memory"} {
		t.Run(store, func(t *testing.T) {
			valkey := "" // the default in-memory store
			if store == "valkey" {
				valkey = startValkey(t)
			}
			bff, kratos := newSizedBFF(t), newKratos(t)
			e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), valkey)

			sizes := []int{300, 5000, 20000, 70000, 300000, 5 << 20}
			want := map[string][32]byte{}
			var paths []string
			for i, size := range sizes {
				path := fmt.Sprintf("/api/v1/tickers?size=%d&seed=%d", size, i+1)
				first := e.get(t, path)
				if first.status != http.StatusOK || len(first.body) < size-64 {
					t.Fatalf("GET %s: %d, %d bytes", path, first.status, len(first.body))
				}
				if first.body != string(pseudoJSON(uint64(i+1), size)) {
					t.Fatalf("GET %s: first answer differs from the BFF's body", path)
				}
				hit := waitForHit(t, e, path)
				if hit.body != first.body {
					t.Fatalf("GET %s: cached body differs (%d vs %d bytes)", path, len(hit.body), len(first.body))
				}
				want[path] = sha256.Sum256([]byte(first.body))
				paths = append(paths, path)
			}
			misses := bff.count("/api/v1/tickers")

			client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 16}}
			const workers, rounds = 12, 15
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := range workers {
				wg.Go(func() {
					for r := range rounds {
						path := paths[(w+r)%len(paths)]
						resp, err := client.Get(e.base + path)
						if err != nil {
							errs <- err
							return
						}
						h := sha256.New()
						_, err = io.Copy(h, resp.Body)
						resp.Body.Close()
						if err != nil {
							errs <- fmt.Errorf("read %s: %w", path, err)
							return
						}
						if got := [32]byte(h.Sum(nil)); got != want[path] {
							errs <- fmt.Errorf("GET %s: body from the cache differs from the BFF's (Cache-Status %q)",
								path, resp.Header.Get("Cache-Status"))
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if n := bff.count("/api/v1/tickers"); n != misses {
				t.Errorf("concurrent GETs reached the BFF %d more times; all should be hits", n-misses)
			}
		})
	}
}

// TestEdgeMemoryStoreIsBounded: with EXHUB_EDGE_CACHE_ENTRIES=10, the in-memory store keeps only a handful of
// answers however many distinct URLs are asked for, so varied query strings cannot grow the edge's memory.
func TestEdgeMemoryStoreIsBounded(t *testing.T) {
	bff, kratos := newSizedBFF(t), newKratos(t)
	e := startEdge(t, writeUI(t), bff.addr(), kratos.addr(), "", "EXHUB_EDGE_CACHE_ENTRIES=10")

	// The store works at this size: a second GET is a hit from the memory store.
	e.get(t, "/api/v1/tickers?size=1000&seed=1")
	if hit := waitForHit(t, e, "/api/v1/tickers?size=1000&seed=1"); !strings.Contains(hit.header.Get("Cache-Status"), "detail=OTTER") {
		t.Fatalf("hit not from the in-memory store: %q", hit.header.Get("Cache-Status"))
	}

	const urls = 60
	for i := range urls {
		if r := e.get(t, fmt.Sprintf("/api/v1/tickers?size=1000&seed=%d", 100+i)); r.status != http.StatusOK {
			t.Fatalf("GET %d: %d", i, r.status)
		}
	}
	hits := 0
	for i := range urls {
		if isHit(e.get(t, fmt.Sprintf("/api/v1/tickers?size=1000&seed=%d", 100+i))) {
			hits++
		}
	}
	// Each answer takes two entries (the answer and its key mapping), so at most 5 of the 60 can still be
	// there; allow for eviction running a little behind the writes.
	if hits > 12 {
		t.Fatalf("%d of %d answers still cached with a 10-entry store", hits, urls)
	}
}
