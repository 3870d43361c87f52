package conformance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
	"github.com/exhub/exhub/plugin-sdk/sdk"
)

// Symbol names one instrument to test with.
type Symbol struct {
	MarketType exchangev1.MarketType
	Symbol     string
}

// Options tune a run. The zero value runs the market data checks on the first trading instrument of every market
// type the plugin claims.
type Options struct {
	// Account enables the trading and wallet checks. In demo mode api_key names a paper account.
	Account *exchangev1.AccountRef
	// Symbols to test with; per market type, the first one given wins. Missing market types use the plugin's first
	// trading instrument.
	Symbols []Symbol
	// CheckTimeout bounds one check; 0 means 20 s.
	CheckTimeout time.Duration
	// StreamWait bounds how long stream checks wait for events; 0 means 10 s.
	StreamWait time.Duration
	// MinDeltas is how many contiguous book deltas the stream check wants; 0 means 3.
	MinDeltas int
	// MustPass names the checks the plugin must pass (plugins/<slug>/conformance.expect). A listed check that
	// fails or does not apply fails the run, so a plugin that stops claiming a capability cannot silently lose its
	// checks. A listed name that is not a check fails the run too. Without MustPass a check that does not apply
	// is reported as n/a and does not fail the run.
	MustPass []string
	// FaultURL is the base URL of the exchange emulator's fault-arming endpoint (faults.Path), e.g.
	// "http://127.0.0.1:7001". It enables the unknown-outcome check; never set it against a real exchange.
	FaultURL string
	// HTTPClient arms faults; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Only runs just these checks (and describe and instruments, which every other check needs). Empty: all.
	Only []string
	// FundingWait bounds how long the funding-payments check waits for a funding settlement (its own timeout is
	// CheckTimeout plus this); the check does not apply when the next one is further away. 0 means 30 s: run it
	// against an emulator with a short funding interval (exhub-emulators --funding-interval).
	FundingWait time.Duration
}

// check is one named conformance check. It returns nil (pass), a notApplicable error, or a failure.
type check struct {
	name string
	run  func(ctx context.Context, e *env) error
}

// fundingWaiters are the checks that also wait for a funding settlement: their timeout grows by twice
// Options.FundingWait.
var fundingWaiters = map[string]bool{"funding-payments": true}

type naError struct{ reason string }

func (e naError) Error() string { return e.reason }

func na(format string, args ...any) error { return naError{fmt.Sprintf(format, args...)} }

// env is what the checks share: the client, the options, and what earlier checks learned.
type env struct {
	c        exchangev1.ExchangeClient
	opts     Options
	desc     *exchangev1.DescribeResponse
	insts    map[exchangev1.MarketType][]*exchangev1.Instrument
	symbols  map[exchangev1.MarketType]*exchangev1.Instrument
	tag      string // makes client order ids of this run unique
	orderIDs []string
	brk      brokerState // the run's broker sub-account (broker checks)
}

var checks = []check{
	{"describe", checkDescribe},
	{"configure-rejects-unknown-key", checkConfigureUnknown},
	{"health", checkHealth},
	{"server-time", checkServerTime},
	{"instruments", checkInstruments},
	{"tickers", checkTickers},
	{"order-book", checkOrderBook},
	{"candles", checkCandles},
	{"candle-paging", checkCandlePaging},
	{"trades", checkTrades},
	{"derivatives-series", checkDerivatives},
	{"error-instrument-not-found", checkUnknownSymbolMarketData},
	{"stream-book", checkStreamBook},
	{"stream-trades", checkStreamTrades},
	{"trading-round-trip", checkRoundTrip},
	{"idempotent-client-order-id", checkIdempotent},
	{"cancel-all", checkCancelAll},
	{"error-precision", checkPrecision},
	{"error-order-not-found", checkOrderNotFound},
	{"error-unknown-symbol-order", checkUnknownSymbolOrder},
	{"error-insufficient-funds", checkInsufficientFunds},
	{"market-capabilities", checkMarketCapabilities},
	{"check-credentials", checkCredentials},
	{"candle-range", checkCandleRange},
	{"stream-ticker", checkStreamTicker},
	{"stream-candles", checkStreamCandles},
	{"stream-mark-price", checkStreamMarkPrice},
	{"account-stream", checkAccountStream},
	{"positions-leverage", checkPositionsLeverage},
	{"algo-orders", checkAlgoOrders},
	{"fills-history", checkFillsHistory},
	{"unknown-outcome", checkUnknownOutcome},
	{"unknown-outcome-amend", checkUnknownOutcomeAmend},
	{"price-match", checkPriceMatch},
	{"tpsl-on-entry", checkTpSlOnEntry},
	{"funding-payments", checkFundingPayments},
	{"wallet-balances", checkBalances},
	{"wallet-transfer", checkTransfer},
	{"wallet-deposit-address", checkDepositAddress},
	{"wallet-convert-quote", checkConvertQuote},
	{"broker-sub-account", checkBrokerSubAccount},
	{"broker-transfer", checkBrokerTransfer},
	{"broker-sub-account-trading", checkBrokerSubTrading},
	{"broker-unknown-outcome", checkBrokerUnknownOutcome},
}

// CheckNames lists the checks in the order they run.
func CheckNames() []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.name
	}
	return out
}

func newEnv(c exchangev1.ExchangeClient, opts Options) *env {
	if opts.CheckTimeout <= 0 {
		opts.CheckTimeout = 20 * time.Second
	}
	if opts.StreamWait <= 0 {
		opts.StreamWait = 10 * time.Second
	}
	if opts.MinDeltas <= 0 {
		opts.MinDeltas = 3
	}
	if opts.FundingWait <= 0 {
		opts.FundingWait = 30 * time.Second
	}
	return &env{c: c, opts: opts, tag: fmt.Sprintf("conf%d", time.Now().UnixNano()%1_000_000_000)}
}

func (e *env) runOne(ctx context.Context, ch check) Result {
	timeout := e.opts.CheckTimeout
	if fundingWaiters[ch.name] {
		timeout += 2 * e.opts.FundingWait
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err := ch.run(cctx, e)
	res := Result{Check: ch.name, Status: Pass, Duration: time.Since(start)}
	var n naError
	switch {
	case errors.As(err, &n):
		res.Status, res.Detail = NotApplicable, n.reason
	case err != nil:
		res.Status, res.Detail = Fail, joinLines(err)
	}
	return res
}

// cleanup cancels whatever orders this run left open.
func (e *env) cleanup(ctx context.Context) {
	if e.opts.Account == nil {
		return
	}
	for _, id := range e.orderIDs {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, _ = e.c.CancelOrder(cctx, &exchangev1.CancelOrderRequest{Account: e.opts.Account, OrderId: id})
		cancel()
	}
}

// ValidateNames returns an error naming every entry of names that is not a check, or that is repeated.
func ValidateNames(names []string) error {
	known := map[string]bool{}
	for _, c := range checks {
		known[c.name] = true
	}
	seen := map[string]bool{}
	var errs []error
	for _, n := range names {
		switch {
		case !known[n]:
			errs = append(errs, fmt.Errorf("%q is not a conformance check (checks: %s)", n, strings.Join(CheckNames(), ", ")))
		case seen[n]:
			errs = append(errs, fmt.Errorf("check %q is listed twice", n))
		}
		seen[n] = true
	}
	return errors.Join(errs...)
}

// ParseExpect reads an expect file: one check name per line; '#' starts a comment; blank lines are ignored. Every
// name must be a check.
func ParseExpect(r io.Reader) ([]string, error) {
	var names []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			names = append(names, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := ValidateNames(names); err != nil {
		return nil, err
	}
	return names, nil
}

// selected lists the checks a run executes.
func (e *env) selected() []check {
	if len(e.opts.Only) == 0 {
		return checks
	}
	var out []check
	for _, c := range checks {
		if c.name == "describe" || c.name == "instruments" || slices.Contains(e.opts.Only, c.name) {
			out = append(out, c)
		}
	}
	return out
}

// expect turns a result of a check listed in MustPass that did not pass into a failure.
func (e *env) expect(res Result) Result {
	if res.Status == NotApplicable && slices.Contains(e.opts.MustPass, res.Check) {
		res.Status = Fail
		res.Detail = "listed as must pass, but not applicable: " + res.Detail
	}
	return res
}

// badNames is the failure of a run whose MustPass or Only lists unknown checks.
func (e *env) badNames() *Result {
	if err := errors.Join(ValidateNames(e.opts.MustPass), ValidateNames(e.opts.Only)); err != nil {
		return &Result{Check: "expect", Status: Fail, Detail: joinLines(err)}
	}
	return nil
}

// Run runs every check against the plugin and returns the report. With MustPass, a listed check that fails or does
// not apply fails the report, and so does an unknown name (as a result named "expect").
func Run(ctx context.Context, c exchangev1.ExchangeClient, opts Options) Report {
	e := newEnv(c, opts)
	defer e.cleanup(context.WithoutCancel(ctx))
	var r Report
	if bad := e.badNames(); bad != nil {
		r.add(*bad)
	}
	for _, ch := range e.selected() { // with Only, MustPass applies to the checks that run
		r.add(e.expect(e.runOne(ctx, ch)))
		if e.desc != nil && r.Exchange == "" {
			r.Exchange = e.desc.GetExchange().GetSlug()
		}
	}
	return r
}

// Test runs every check as a subtest of t. A check that does not apply (capability not claimed, no account) is
// logged, not failed, unless Options.MustPass lists it.
func Test(t *testing.T, c exchangev1.ExchangeClient, opts Options) {
	t.Helper()
	e := newEnv(c, opts)
	if bad := e.badNames(); bad != nil {
		t.Fatal(bad.Detail)
	}
	t.Cleanup(func() { e.cleanup(context.Background()) })
	for _, ch := range e.selected() {
		t.Run(ch.name, func(t *testing.T) {
			res := e.expect(e.runOne(t.Context(), ch))
			switch res.Status {
			case Fail:
				t.Error(res.Detail)
			case NotApplicable:
				t.Logf("not applicable: %s", res.Detail)
			}
		})
	}
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers

var canonicalRe = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$`)

// dec parses a decimal that must be in canonical form.
func dec(field, s string) (decimal.Decimal, error) {
	if !canonicalRe.MatchString(s) || s == "-0" {
		return decimal.Decimal{}, fmt.Errorf("%s %q is not a canonical decimal", field, s)
	}
	return decimal.RequireFromString(s), nil
}

func positive(field, s string) (decimal.Decimal, error) {
	d, err := dec(field, s)
	if err == nil && !d.IsPositive() {
		err = fmt.Errorf("%s %s is not positive", field, s)
	}
	return d, err
}

// optional parses a decimal that may be empty.
func optional(field, s string) error {
	if s == "" {
		return nil
	}
	_, err := dec(field, s)
	return err
}

func (e *env) needDescribe() error {
	if e.desc == nil {
		return errors.New("Describe failed earlier")
	}
	return nil
}

func (e *env) needSymbols() error {
	if err := e.needDescribe(); err != nil {
		return err
	}
	if len(e.symbols) == 0 {
		return errors.New("no instruments to test with (the instruments check failed)")
	}
	return nil
}

// marketTypes are the market types to test, in enum order.
func (e *env) marketTypes() []exchangev1.MarketType {
	var out []exchangev1.MarketType
	for mt := range e.symbols {
		out = append(out, mt)
	}
	slices.Sort(out)
	return out
}

func (e *env) trading() *exchangev1.TradingCapabilities { return e.desc.GetCapabilities().GetTrading() }

// needTrading says whether trading checks apply.
func (e *env) needTrading() error {
	if err := e.needSymbols(); err != nil {
		return err
	}
	if !e.trading().GetEnabled() {
		return na("the plugin does not claim trading")
	}
	if e.opts.Account == nil {
		return na("no account given (set Options.Account / --account-key)")
	}
	return nil
}

// tradeSymbol picks the instrument trading checks use: spot when offered (no leverage involved), else SWAP.
func (e *env) tradeSymbol() *exchangev1.Instrument {
	if in, ok := e.symbols[exchangev1.MarketType_MARKET_TYPE_SPOT]; ok {
		return in
	}
	return e.symbols[e.marketTypes()[0]]
}

func (e *env) clientID(n string) string { return e.tag + n }

// reasonIs checks an error's typed reason.
func reasonIs(err error, want ...exchangev1.ErrorReason) error {
	if err == nil {
		return fmt.Errorf("expected an error with reason %v, got success", want)
	}
	got := sdk.DetailOf(err).GetReason()
	if !slices.Contains(want, got) {
		return fmt.Errorf("expected reason %v, got %v (%s)", want, got, sdk.MessageOf(err))
	}
	return nil
}

func describeErr(what string, err error) error {
	d := sdk.DetailOf(err)
	msg := fmt.Sprintf("%s: %s [%s]", what, sdk.MessageOf(err), sdk.ReasonName(d.GetReason()))
	if d.GetExchangeCode() != "" {
		msg += fmt.Sprintf(" exchange code %s: %s", d.GetExchangeCode(), d.GetExchangeMessage())
	}
	return errors.New(msg)
}

// intervalMs knows the fixed-length intervals.
var intervalMs = map[string]int64{
	"1s": 1_000, "1m": 60_000, "3m": 180_000, "5m": 300_000, "15m": 900_000, "30m": 1_800_000, "1h": 3_600_000,
	"2h": 7_200_000, "4h": 14_400_000, "6h": 21_600_000, "8h": 28_800_000, "12h": 43_200_000, "1d": 86_400_000,
	"3d": 259_200_000, "1w": 604_800_000, "1M": 0,
}

var periodSet = []string{"5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d"}

// gridOK checks that v is a multiple of step (when step is set).
func gridOK(field string, v decimal.Decimal, step string) error {
	if step == "" {
		return nil
	}
	st, err := positive("step", step)
	if err != nil {
		return nil // reported by the instruments check
	}
	if !v.Mod(st).IsZero() {
		return fmt.Errorf("%s %s is not on the %s grid", field, v, step)
	}
	return nil
}

func errorsJoin(errs []error) error {
	if len(errs) > 5 {
		errs = append(errs[:5], fmt.Errorf("... and %d more", len(errs)-5))
	}
	return errors.Join(errs...)
}

func joinLines(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
