// Package conformance checks that an exchange plugin keeps the exchange.v1 contract. It runs against any
// exchangev1.ExchangeClient: a plugin process launched with sdk.Launch, or an implementation served in-process
// (sdktest.ServeInProcess). Use Run for a Report (pluginctl conformance prints it), or Test inside a Go test.
//
// Market data checks always run. Trading and wallet checks run when the plugin claims the capability in Describe
// and Options.Account names an account to use; they place small orders far from the market and cancel them, and
// move a small amount between wallets and back. Never point them at an account holding real money you cannot
// afford to have traded.
package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Status of one check.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// NotApplicable: the plugin does not claim the capability, or the options give no account.
	NotApplicable Status = "n/a"
)

// Result is the outcome of one check.
type Result struct {
	Check    string        `json:"check"`
	Status   Status        `json:"status"`
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"-"`
	// DurationMs is Duration in milliseconds, for JSON.
	DurationMs float64 `json:"durationMs"`
}

// Report is the outcome of a conformance run.
type Report struct {
	Exchange string   `json:"exchange,omitempty"`
	Results  []Result `json:"results"`
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`
	Skipped  int      `json:"notApplicable"`
}

// OK is true when no check failed.
func (r Report) OK() bool { return r.Failed == 0 }

func (r *Report) add(res Result) {
	res.DurationMs = float64(res.Duration.Microseconds()) / 1000
	r.Results = append(r.Results, res)
	switch res.Status {
	case Pass:
		r.Passed++
	case Fail:
		r.Failed++
	default:
		r.Skipped++
	}
}

// WriteTable prints the report as an aligned table with a summary line.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tRESULT\tDURATION\tDETAIL")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", res.Check, strings.ToUpper(string(res.Status)),
			res.Duration.Round(100*time.Microsecond), oneLine(res.Detail))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	_, err := fmt.Fprintf(w, "\n%s %s: %d passed, %d failed, %d not applicable\n", verdict, r.Exchange, r.Passed, r.Failed, r.Skipped)
	return err
}

// JSON is the report as indented JSON.
func (r Report) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
