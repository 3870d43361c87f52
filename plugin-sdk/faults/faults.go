// Package faults lets tests and the conformance kit make an exchange emulator lose the answer to one request, so the
// "maybe executed" path of a plugin and of the host can be exercised against the real wire protocol.
//
// A fault is armed for one client id (a client order id, client algo id or transfer/withdrawal client id) and is
// used up by the first request that carries that id. The emulators serve the arming endpoint at Path:
//
//	POST /__exhub/faults  {"client_id": "abc", "fault": "accept_then_error"}   -> 204
//
// The endpoint exists only on emulators; a real exchange has nothing like it.
package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// Path is where every emulator serves the arming endpoint.
const Path = "/__exhub/faults"

// Kind is what happens to the request that carries the armed client id.
type Kind string

const (
	// AcceptThenError executes the request, then answers with the exchange's own "execution status unknown" error
	// (Binance -1007, OKX 50004, Bybit 10000).
	AcceptThenError Kind = "accept_then_error"
	// AcceptThenDrop executes the request, then closes the connection without an answer.
	AcceptThenDrop Kind = "accept_then_drop"
	// DropBefore closes the connection without executing the request.
	DropBefore Kind = "drop_before"
)

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	switch k {
	case AcceptThenError, AcceptThenDrop, DropBefore:
		return true
	}
	return false
}

// Executes reports whether a request hit by the fault is executed.
func (k Kind) Executes() bool { return k == AcceptThenError || k == AcceptThenDrop }

// MaxArmed bounds how many faults can wait at once.
const MaxArmed = 10000

// ErrFull is returned by Arm when MaxArmed faults are waiting.
var ErrFull = errors.New("faults: too many armed faults")

// Injector holds armed faults. The zero value is ready to use; it is safe for concurrent use.
type Injector struct {
	mu    sync.Mutex
	armed map[string]Kind
}

// Arm arms k for the next request carrying clientID (replacing a fault armed before for the same id).
func (in *Injector) Arm(clientID string, k Kind) error {
	if clientID == "" {
		return errors.New("faults: client_id is required")
	}
	if !k.Valid() {
		return fmt.Errorf("faults: unknown fault %q", k)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.armed == nil {
		in.armed = make(map[string]Kind)
	}
	if _, ok := in.armed[clientID]; !ok && len(in.armed) >= MaxArmed {
		return ErrFull
	}
	in.armed[clientID] = k
	return nil
}

// Take returns and disarms the fault armed for clientID. A nil Injector has none.
func (in *Injector) Take(clientID string) (Kind, bool) {
	if in == nil || clientID == "" {
		return "", false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	k, ok := in.armed[clientID]
	if ok {
		delete(in.armed, clientID)
	}
	return k, ok
}

// Pending is the number of armed faults not yet used.
func (in *Injector) Pending() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.armed)
}

// Request is the body of the arming endpoint.
type Request struct {
	ClientID string `json:"client_id"`
	Fault    Kind   `json:"fault"`
}

// ServeHTTP serves the arming endpoint: POST a Request, 204 when armed, 400 for a bad request.
func (in *Injector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var req Request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := in.Arm(req.ClientID, req.Fault); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, ErrFull) {
			code = http.StatusTooManyRequests
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Drop closes the client's connection without writing an answer. It reports false when the connection cannot be
// taken over (HTTP/2); the caller then answers 504 with no body, which a client also cannot read an outcome from.
func Drop(w http.ResponseWriter) bool {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		w.WriteHeader(http.StatusGatewayTimeout)
		return false
	}
	_ = conn.Close()
	return true
}

// Arm asks the emulator at baseURL (e.g. "http://127.0.0.1:7001") to arm a fault. It is the client side used by
// tests and the conformance kit.
func Arm(client *http.Client, baseURL, clientID string, k Kind) error {
	if client == nil {
		client = http.DefaultClient
	}
	body, err := json.Marshal(Request{ClientID: clientID, Fault: k})
	if err != nil {
		return err
	}
	resp, err := client.Post(baseURL+Path, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("faults: arm %s: %w", clientID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("faults: arm %s: emulator answered %s", clientID, resp.Status)
	}
	return nil
}
