package venue

import (
	"fmt"
	"slices"
	"sort"

	"github.com/shopspring/decimal"
)

// coin is one catalog row: the base coin and its reference price in USDT.
type coin struct {
	base  string
	price string
	// rank orders coins by size; it picks the leverage band.
	rank int
}

// catalog is the synthetic market's coin list with plausible reference prices. Profiles pick from it.
var catalog = []coin{
	{"BTC", "98000", 1}, {"ETH", "3400", 2}, {"SOL", "180", 3}, {"XRP", "2.3", 4}, {"DOGE", "0.32", 5},
	{"BNB", "640", 6}, {"ADA", "0.95", 7}, {"TRX", "0.2", 8}, {"AVAX", "38", 9}, {"LINK", "18", 10},
	{"DOT", "7.5", 11}, {"TON", "5.6", 12}, {"SHIB", "0.000022", 13}, {"LTC", "105", 14}, {"BCH", "460", 15},
	{"NEAR", "5.8", 16}, {"UNI", "12", 17}, {"APT", "11", 18}, {"ICP", "10", 19}, {"ETC", "27", 20},
	{"FIL", "5.5", 21}, {"ATOM", "7.2", 22}, {"ARB", "0.9", 23}, {"OP", "2.1", 24}, {"SUI", "3.6", 25},
	{"INJ", "28", 26}, {"HBAR", "0.28", 27}, {"XLM", "0.42", 28}, {"AAVE", "310", 29}, {"MKR", "1600", 30},
	{"PEPE", "0.000018", 31}, {"WIF", "2.8", 32}, {"SEI", "0.5", 33}, {"TIA", "6.5", 34}, {"RUNE", "5", 35},
	{"LDO", "1.8", 36}, {"STX", "1.9", 37}, {"IMX", "1.5", 38}, {"ALGO", "0.38", 39}, {"VET", "0.045", 40},
	{"GRT", "0.26", 41}, {"SAND", "0.6", 42}, {"MANA", "0.55", 43}, {"AXS", "7.5", 44}, {"CRV", "0.9", 45},
	{"FET", "1.4", 46}, {"RENDER", "7.2", 47}, {"ENA", "0.9", 48}, {"JUP", "1.1", 49}, {"ORDI", "38", 50},
}

// Profile describes which instruments an exchange would list and how it sizes them.
type Profile struct {
	Name string
	// Instruments in a stable order: spot first, then perpetuals, each by catalog rank.
	Instruments []*Instrument
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string { return []string{"binance", "bybit", "okx"} }

// LoadProfile builds the instrument list of a built-in profile. Each call returns fresh instruments.
func LoadProfile(name string) (*Profile, error) {
	var skipSpot, skipPerp map[string]bool
	contracts := false
	switch name {
	case "binance":
	case "bybit":
		skipSpot = set("MKR", "RUNE", "ICP", "ORDI")
		skipPerp = set("MKR", "TON")
	case "okx":
		skipSpot = set("RENDER", "SEI", "INJ", "VET", "FET")
		skipPerp = set("RENDER", "SEI", "ENA", "WIF", "JUP", "TIA")
		contracts = true
	default:
		return nil, fmt.Errorf("venue: unknown profile %q (have %v)", name, ProfileNames())
	}
	p := &Profile{Name: name}
	for _, m := range []Kind{Spot, Perp} {
		for _, c := range catalog {
			if (m == Spot && skipSpot[c.base]) || (m == Perp && skipPerp[c.base]) {
				continue
			}
			in := defineInstrument(c, m, contracts)
			if err := in.Init(); err != nil {
				return nil, fmt.Errorf("profile %s: %w", name, err)
			}
			p.Instruments = append(p.Instruments, in)
		}
	}
	return p, nil
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// magnitude is floor(log10(d)) for positive d, computed exactly from the decimal representation.
func magnitude(d decimal.Decimal) int {
	return len(d.Coefficient().String()) + int(d.Exponent()) - 1
}

func pow10(e int) decimal.Decimal { return decimal.New(1, int32(e)) }

func minDec(a, b decimal.Decimal) decimal.Decimal {
	if a.LessThan(b) {
		return a
	}
	return b
}

// defineInstrument derives tick, step, limits, leverage and tiers from the coin's price magnitude, the way real
// venues roughly do: about five significant digits of price, steps worth well under a dollar.
func defineInstrument(c coin, m Kind, contracts bool) *Instrument {
	price := decimal.RequireFromString(c.price)
	mag := magnitude(price)
	in := &Instrument{Market: m, Base: c.base, Quote: "USDT", Status: Trading, RefPrice: price}
	switch m {
	case Spot:
		in.ID = c.base + "/USDT"
		in.TickSize = minDec(pow10(mag-4), decimal.RequireFromString("0.01"))
		in.StepSize = minDec(pow10(-(mag + 1)), decimal.NewFromInt(1))
		in.MinNotional = decimal.NewFromInt(5)
		in.MakerFee = decimal.RequireFromString("0.001")
		in.TakerFee = decimal.RequireFromString("0.001")
	case Perp:
		in.ID = c.base + "/USDT:PERP"
		in.TickSize = minDec(pow10(mag-5), decimal.RequireFromString("0.1"))
		in.StepSize = minDec(pow10(-(mag - 1)), decimal.NewFromInt(1))
		in.MinNotional = decimal.NewFromInt(5)
		switch c.base {
		case "BTC":
			in.MinNotional = decimal.NewFromInt(100)
		case "ETH":
			in.MinNotional = decimal.NewFromInt(20)
		}
		in.MakerFee = decimal.RequireFromString("0.0002")
		in.TakerFee = decimal.RequireFromString("0.0005")
		switch {
		case c.rank == 1:
			in.MaxLeverage = 125
		case c.rank == 2:
			in.MaxLeverage = 100
		case c.rank <= 10:
			in.MaxLeverage = 75
		case c.rank <= 30:
			in.MaxLeverage = 50
		default:
			in.MaxLeverage = 20
		}
		in.Tiers = tiers(in.MaxLeverage, c.rank)
		if contracts {
			// Contract exchanges size in contracts worth roughly 10-100 USDT (BTC: 0.01, ETH: 0.1, DOGE: 1000);
			// one tenth of a contract is the smallest step for the two largest, one contract for the rest.
			in.ContractValue = pow10(2 - mag)
			if in.ContractValue.GreaterThan(decimal.NewFromInt(1)) || c.rank <= 2 {
				in.StepSize = in.ContractValue.Div(decimal.NewFromInt(10))
			} else {
				in.StepSize = in.ContractValue
			}
		}
	}
	in.MinQty = in.StepSize
	in.MaxQty = minDec(pow10(8-mag), in.StepSize.Mul(pow10(10)))
	if in.MaxQty.LessThan(in.StepSize.Mul(decimal.NewFromInt(1000))) {
		in.MaxQty = in.StepSize.Mul(decimal.NewFromInt(1000))
	}
	in.MarketMax = in.MaxQty.Div(decimal.NewFromInt(10))
	in.MinPrice = in.TickSize
	in.MaxPrice = pow10(mag + 2)
	// Listed long before any history a venue generates.
	in.Listed = 1_500_000_000_000
	return in
}

// tiers builds a small maintenance-margin table: the first bracket allows maxLev, each next one halves it.
func tiers(maxLev, rank int) []MarginTier {
	base := int64(50_000)
	if rank <= 2 {
		base = 1_000_000
	} else if rank <= 10 {
		base = 250_000
	}
	var out []MarginTier
	lev := maxLev
	var prevRate, prevAmt, prevMax decimal.Decimal
	for i := 0; i < 5 && lev >= 1; i++ {
		rate := decimal.NewFromInt(1).Div(decimal.NewFromInt(int64(lev) * 2)).Round(4)
		maxN := decimal.NewFromInt(base << (2 * i))
		amt := decimal.Zero
		if i > 0 {
			amt = prevAmt.Add(prevMax.Mul(rate.Sub(prevRate)))
		}
		out = append(out, MarginTier{MaxNotional: maxN, MaintRate: rate, MaintAmount: amt, MaxLeverage: lev})
		prevRate, prevAmt, prevMax = rate, amt, maxN
		lev /= 2
	}
	return out
}

// bases returns the distinct base coins of a list of instruments, sorted.
func bases(ins []*Instrument) []string {
	var out []string
	for _, in := range ins {
		if !slices.Contains(out, in.Base) {
			out = append(out, in.Base)
		}
	}
	sort.Strings(out)
	return out
}
