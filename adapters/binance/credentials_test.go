package binance

import "testing"

// The HMAC examples from Binance's API documentation (SIGNED endpoint security): the documented secret, query
// string and resulting signature.
func TestSignDocumentedExamples(t *testing.T) {
	const secret = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j"
	cases := []struct{ payload, want string }{
		{"symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559",
			"c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71"},
		{"symbol=%EF%BC%91%EF%BC%92%EF%BC%93%EF%BC%94%EF%BC%95%EF%BC%96&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559",
			"e1353ec6b14d888f1164ae9af8228a3dbd508bc82eb867db8ab6046442f33ef3"},
	}
	for _, c := range cases {
		if got := Sign(secret, c.payload); got != c.want {
			t.Errorf("Sign(%q) = %s, want %s", c.payload, got, c.want)
		}
	}
	if Sign("other", cases[0].payload) == cases[0].want {
		t.Error("a different secret must give a different signature")
	}
}
