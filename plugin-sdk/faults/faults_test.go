package faults

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestArmTakeIsOneShot(t *testing.T) {
	var in Injector
	if err := in.Arm("c1", AcceptThenDrop); err != nil {
		t.Fatal(err)
	}
	if k, ok := in.Take("c2"); ok {
		t.Fatalf("other id took %q", k)
	}
	k, ok := in.Take("c1")
	if !ok || k != AcceptThenDrop {
		t.Fatalf("Take = %q, %v", k, ok)
	}
	if _, ok := in.Take("c1"); ok {
		t.Fatal("a fault was used twice")
	}
	var nilIn *Injector
	if _, ok := nilIn.Take("c1"); ok {
		t.Fatal("nil injector had a fault")
	}
}

func TestArmRefusesBadInputAndBounds(t *testing.T) {
	var in Injector
	if err := in.Arm("", AcceptThenError); err == nil {
		t.Fatal("empty id armed")
	}
	if err := in.Arm("x", "explode"); err == nil {
		t.Fatal("unknown kind armed")
	}
	for i := 0; i < MaxArmed; i++ {
		if err := in.Arm(strings.Repeat("a", 1)+itoa(i), DropBefore); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Arm("one-more", DropBefore); !errors.Is(err, ErrFull) {
		t.Fatalf("Arm past the bound = %v", err)
	}
	if err := in.Arm("a0", AcceptThenError); err != nil {
		t.Fatalf("re-arming an armed id at the bound = %v", err)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}

func TestEndpointAndClient(t *testing.T) {
	var in Injector
	mux := http.NewServeMux()
	mux.Handle(Path, &in)
	mux.HandleFunc("/drop", func(w http.ResponseWriter, r *http.Request) { Drop(w) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	if err := Arm(srv.Client(), srv.URL, "ord-1", AcceptThenError); err != nil {
		t.Fatal(err)
	}
	if k, ok := in.Take("ord-1"); !ok || k != AcceptThenError {
		t.Fatalf("armed over HTTP: %q %v", k, ok)
	}
	if err := Arm(srv.Client(), srv.URL, "ord-2", "nope"); err == nil {
		t.Fatal("bad kind accepted over HTTP")
	}
	resp, err := srv.Client().Get(srv.URL + Path)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET = %d", resp.StatusCode)
	}
	if _, err := srv.Client().Get(srv.URL + "/drop"); err == nil {
		t.Fatal("a dropped connection returned an answer")
	}
}
