package emulator

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/exhub/exhub/plugin-sdk/faults"
)

// TestFaultsArmedOverHTTP: a fault armed at faults.Path is used up by the order carrying its client id: -1007 after
// executing, a closed connection after executing, or a closed connection without executing.
func TestFaultsArmedOverHTTP(t *testing.T) {
	e := newEnv(t)
	hc := &http.Client{}
	for _, c := range []struct {
		kind faults.Kind
		path string
	}{{faults.AcceptThenError, "/api/v3/order"}, {faults.AcceptThenDrop, "/fapi/v1/order"}, {faults.DropBefore, "/api/v3/order"}} {
		cid := "f-" + string(c.kind)
		if err := faults.Arm(hc, e.ts.URL, cid, c.kind); err != nil {
			t.Fatal(err)
		}
		p := url.Values{"symbol": {"BTCUSDT"}, "side": {"BUY"}, "type": {"MARKET"}, "quantity": {"0.01"}, "newClientOrderId": {cid}}
		payload := func() string {
			p.Set("timestamp", itoa64(e.v.Now()))
			s := p.Encode()
			return s + "&signature=" + Sign(DemoAPISecret, s)
		}()
		req, _ := http.NewRequest(http.MethodPost, e.ts.URL+c.path+"?"+payload, nil)
		req.Header.Set("X-MBX-APIKEY", DemoAPIKey)
		res, err := hc.Do(req)
		switch c.kind {
		case faults.AcceptThenError:
			if err != nil {
				t.Fatal(err)
			}
			r := resp{status: res.StatusCode}
			r.body = readAll(t, res)
			r.expectErr(t, http.StatusRequestTimeout, -1007)
		default:
			if err == nil {
				res.Body.Close()
				t.Fatalf("%s: got an answer %d, want a closed connection", c.kind, res.StatusCode)
			}
		}
		futures := c.path == "/fapi/v1/order"
		_, gerr := e.v.GetOrder(DemoAccount, 0, cid)
		if (gerr == nil) != c.kind.Executes() {
			t.Fatalf("%s (futures %v): order exists %v, executed %v", c.kind, futures, gerr == nil, c.kind.Executes())
		}
		// The fault is used up: the same id now gets an ordinary answer.
		if e.s.Faults().Pending() != 0 {
			t.Fatalf("%s: fault not used up", c.kind)
		}
	}
	if r := e.do(http.MethodPost, e.ts.URL+faults.Path, nil, `{"client_id":"x","fault":"nope"}`); r.status != http.StatusBadRequest {
		t.Fatalf("unknown fault kind: %d", r.status)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func readAll(t *testing.T, res *http.Response) []byte {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
