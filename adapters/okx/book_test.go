package okx

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

func i64(v int64) *int64 { return &v }

func TestChecksum(t *testing.T) {
	var b Book
	b.Reset(rawBook{Bids: [][]string{{"8476.98", "1.234", "0", "1"}, {"8476.97", "0.5", "0", "1"}},
		Asks: [][]string{{"8476.99", "0.75", "0", "2"}, {"8477", "2", "0", "1"}}})
	// CRC32 of "8476.98:1.234:8476.99:0.75:8476.97:0.5:8477:2", computed independently.
	if got := b.Checksum(); got != 1249293124 {
		t.Fatalf("checksum %d", got)
	}
	if err := b.Verify(rawBook{Checksum: i64(1249293124)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Verify(rawBook{Checksum: i64(42)}); !errors.Is(err, ErrChecksum) {
		t.Fatalf("mismatch not detected: %v", err)
	}
	// Uneven sides: the longer side's extra levels follow alone.
	var u Book
	u.Reset(rawBook{Bids: [][]string{{"3", "1"}, {"2", "1"}, {"1", "1"}}, Asks: [][]string{{"4", "1"}}})
	var w Book
	w.Reset(rawBook{Bids: [][]string{{"3", "1"}}, Asks: [][]string{{"4", "1"}}})
	if u.Checksum() == w.Checksum() {
		t.Fatal("deeper bids do not change the checksum")
	}
}

func TestBookUpdatesAndGaps(t *testing.T) {
	var b Book
	b.Reset(rawBook{Bids: [][]string{{"10", "1"}, {"9", "2"}}, Asks: [][]string{{"11", "1"}, {"12", "3"}}, SeqID: i64(100)})
	if err := b.Update(rawBook{Bids: [][]string{{"9", "0"}, {"9.5", "4"}}, Asks: [][]string{{"11", "0.5"}}, SeqID: i64(101), PrevSeqID: i64(100)}); err != nil {
		t.Fatal(err)
	}
	bids, asks := b.Levels(0, decimal.NewFromInt(1))
	if len(bids) != 2 || bids[1].Price != "9.5" || asks[0].Qty != "0.5" {
		t.Fatalf("bids %v asks %v", bids, asks)
	}
	err := b.Update(rawBook{Bids: [][]string{{"8", "1"}}, SeqID: i64(105), PrevSeqID: i64(103)})
	if !errors.Is(err, ErrBookGap) {
		t.Fatalf("gap not detected: %v", err)
	}
	if bids, _ := b.Levels(0, decimal.NewFromInt(1)); len(bids) != 2 {
		t.Fatal("a refused update changed the book")
	}
	// Contract sizes become base units.
	_, asks = b.Levels(1, decimal.RequireFromString("0.01"))
	if len(asks) != 1 || asks[0].Qty != "0.005" {
		t.Fatalf("asks %v", asks)
	}
}

func TestContractConversion(t *testing.T) {
	in := &Instrument{InstID: "ETH-USDT-SWAP", MarketType: exchangev1.MarketType_MARKET_TYPE_SWAP, TickSz: decimal.RequireFromString("0.01"),
		LotSz: decimal.RequireFromString("0.1"), MinSz: decimal.RequireFromString("0.2"), ContractSize: decimal.RequireFromString("0.1")}
	cases := []struct {
		qty    string
		sz     string
		reason exchangev1.ErrorReason
	}{
		{"0.02", "0.2", 0}, // the minimum: 0.2 contracts
		{"0.03", "0.3", 0}, // one lot above
		{"100", "1000", 0}, // large
		{"0.01", "", exchangev1.ErrorReason_ERROR_REASON_PRECISION},   // one lot, below the minimum
		{"0.025", "", exchangev1.ErrorReason_ERROR_REASON_PRECISION},  // half a lot
		{"0.0301", "", exchangev1.ErrorReason_ERROR_REASON_PRECISION}, // just off the grid
		{"0", "", exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT},
		{"-0.1", "", exchangev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT},
	}
	for _, c := range cases {
		sz, err := in.ToOKXSize("qty", decimal.RequireFromString(c.qty))
		if c.reason == 0 {
			if err != nil || canon(sz) != c.sz {
				t.Errorf("%s: %s %v, want %s", c.qty, sz, err, c.sz)
				continue
			}
			if back := in.FromOKXSize(sz); !back.Equal(decimal.RequireFromString(c.qty)) {
				t.Errorf("%s: round trip gives %s", c.qty, back)
			}
			continue
		}
		if sdk.DetailOf(err).GetReason() != c.reason || sdk.DetailOf(err).GetField() != "qty" {
			t.Errorf("%s: %v, want %v", c.qty, err, c.reason)
		}
	}
	if err := in.CheckPrice("price", decimal.RequireFromString("2500.005")); sdk.DetailOf(err).GetReason() != exchangev1.ErrorReason_ERROR_REASON_PRECISION {
		t.Errorf("off-tick price: %v", err)
	}
	if err := in.CheckPrice("price", decimal.RequireFromString("2500.01")); err != nil {
		t.Error(err)
	}
}

func FuzzParseEnvelope(f *testing.F) {
	f.Add([]byte(`{"code":"0","msg":"","data":[{"ts":"1"}]}`))
	f.Add([]byte(`{"code":"1","msg":"","data":[{"sCode":"51008","sMsg":"x"}]}`))
	f.Add([]byte(`{"code":"51001","data":[],"msg":"Instrument ID does not exist"}`))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseEnvelope(b) })
}

func FuzzParseInstruments(f *testing.F) {
	f.Add([]byte(`[{"instType":"SWAP","instId":"A-USDT-SWAP","state":"live","tickSz":"0.1","lotSz":"1","minSz":"1","ctVal":"0.01","ctMult":"1","ctType":"linear","ctValCcy":"A"}]`))
	f.Add([]byte(`[{"instType":"SPOT","instId":"A-USDT","state":"live","tickSz":"0.1","lotSz":"0.001","minSz":"0.001"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := ParseInstruments(b)
		if err == nil {
			for _, in := range list {
				_ = in.Proto()
			}
		}
	})
}

func FuzzParseTickers(f *testing.F) {
	f.Add([]byte(`[{"instType":"SWAP","instId":"A-USDT-SWAP","last":"2","sodUtc0":"1","bidPx":"1.9","bidSz":"3","ts":"1"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseTickers(b)
		if err == nil {
			for _, r := range rows {
				_, _ = tickerProto(r, nil)
			}
		}
	})
}

func FuzzParseCandles(f *testing.F) {
	f.Add([]byte(`[["1","1","2","0.5","1.5","10","15","15","1"]]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseCandles(b, exchangev1.MarketType_MARKET_TYPE_SWAP)
		_, _ = ParseCandles(b, exchangev1.MarketType_MARKET_TYPE_SPOT)
	})
}

func FuzzParseTrades(f *testing.F) {
	f.Add([]byte(`[{"instId":"A","tradeId":"1","px":"1","sz":"2","side":"buy","ts":"1"}]`))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseTrades(b, decimal.RequireFromString("0.1")) })
}

func FuzzBook(f *testing.F) {
	f.Add([]byte(`[{"asks":[["2","1","0","1"]],"bids":[["1","1","0","1"]],"ts":"1","checksum":5,"seqId":2,"prevSeqId":1}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseBooks(b)
		if err != nil {
			return
		}
		var bk Book
		for _, r := range rows {
			if err := bk.Update(r); err == nil {
				_ = bk.Verify(r)
			}
		}
		_, _ = bk.Levels(5, decimal.NewFromInt(1))
	})
}

func FuzzParseOrders(f *testing.F) {
	f.Add([]byte(`[{"instId":"A-USDT-SWAP","ordId":"1","px":"1","sz":"1","accFillSz":"0","state":"live","ordType":"limit","side":"buy","cTime":"1","uTime":"1"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseOrders(b)
		if err != nil {
			return
		}
		for _, r := range rows {
			_, _ = orderProto(r, unitConv)
			if f, err := fillOf(r, unitConv); err == nil && f != nil && (f.Price == "0" || f.Price == "") {
				t.Fatalf("fill with no price: %v", f)
			}
		}
	})
}

func FuzzParsePositions(f *testing.F) {
	f.Add([]byte(`{"instId":"A-USDT-SWAP","posSide":"net","pos":"-3","avgPx":"10","bePx":"10.01","mgnRatio":"12.5","mgnMode":"cross","uTime":"1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r rawPosition
		if json.Unmarshal(b, &r) != nil {
			return
		}
		p, err := positionProto(r, unitConv)
		if err != nil {
			return
		}
		if p.MarginRatio != "" {
			if d, err := decimal.NewFromString(p.MarginRatio); err != nil || d.IsNegative() {
				t.Fatalf("margin ratio %q from mgnRatio %q", p.MarginRatio, r.MgnRatio)
			}
		}
	})
}

func FuzzParseRubik(f *testing.F) {
	f.Add([]byte(`[["1","2","3"]]`))
	f.Fuzz(func(t *testing.T, b []byte) { _, _, _ = ParseRubikRows(json.RawMessage(b), 2) })
}

func FuzzParseBalances(f *testing.F) {
	f.Add([]byte(`[{"totalEq":"1","details":[{"ccy":"USDT","cashBal":"1","availBal":"1","frozenBal":"0"}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _, _, _ = ParseTradingBalance(b)
		_, _ = ParseFundingBalances(b)
	})
}
