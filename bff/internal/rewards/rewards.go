// Package rewards computes referral rewards: a share (rewards.rate, 20% by default) of the trading fees each
// referred member pays, credited to the member who referred them as unsettled rewards. A background job owned by
// the BFF's lifecycle reads each referee's fills per exchange and market type from the exchanges (through the
// trading service, the member's own accounts) since a cursor kept in the store, and writes one reward per fill.
// Rewards are idempotent: the source of each is the exchange, market, symbol, trade id and referee, unique in the
// store, so fills read twice (an overlap, a restart) never pay twice. Settlement is the operator's
// (exhub-admin rewards settle).
package rewards

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/trading"
)

// Config is the rewards section of the BFF configuration.
type Config struct {
	// Enabled runs the rewards job.
	Enabled bool `yaml:"enabled"`
	// Rate is the referrer's share of a referee's trading fee, a decimal fraction ("0.2" is 20%).
	Rate string `yaml:"rate"`
	// Interval is the pause between two passes over the referees.
	Interval time.Duration `yaml:"interval"`
	// Window is the span of fills read per call; the job steps the cursor window by window up to now.
	Window time.Duration `yaml:"window"`
	// Overlap re-reads this much before the cursor on each pass, for fills an exchange reports late.
	Overlap time.Duration `yaml:"overlap"`
	// MaxWindows bounds the windows read per referee, exchange and market in one pass (a long-idle cursor catches
	// up over several passes).
	MaxWindows int `yaml:"max_windows"`
}

// DefaultConfig: on, 20%, every minute, 6-hour windows with a 5-minute overlap, at most 28 windows (a week) per
// pass.
func DefaultConfig() Config {
	return Config{Enabled: true, Rate: "0.2", Interval: time.Minute, Window: 6 * time.Hour, Overlap: 5 * time.Minute,
		MaxWindows: 28}
}

// Validate names each bad key relative to the section.
func (c Config) Validate() error {
	var errs []error
	if r, err := decimal.NewFromString(c.Rate); err != nil || r.IsNegative() || r.GreaterThan(decimal.NewFromInt(1)) {
		errs = append(errs, fmt.Errorf("rate: %q, want a decimal from 0 to 1 (0.2 is 20%%)", c.Rate))
	}
	if c.Interval < time.Second || c.Interval > 24*time.Hour {
		errs = append(errs, fmt.Errorf("interval: %s, want 1s to 24h", c.Interval))
	}
	if c.Window < time.Minute || c.Window > 7*24*time.Hour {
		errs = append(errs, fmt.Errorf("window: %s, want 1m to 168h", c.Window))
	}
	if c.Overlap < 0 || c.Overlap > time.Hour {
		errs = append(errs, fmt.Errorf("overlap: %s, want 0 to 1h", c.Overlap))
	}
	if c.MaxWindows < 1 || c.MaxWindows > 1000 {
		errs = append(errs, fmt.Errorf("max_windows: %d, want 1 to 1000", c.MaxWindows))
	}
	return errors.Join(errs...)
}

// rate is the validated rate.
func (c Config) rate() decimal.Decimal {
	r, _ := decimal.NewFromString(c.Rate)
	return r
}

// Fills is what the job reads fills through; *trading.Service is one. Every read is keyed by the referee's member
// id, so it reads that member's own accounts only.
type Fills interface {
	HistoryExchanges() []string
	HasAccount(ctx context.Context, memberID, exchange string) (bool, error)
	WalkFills(ctx context.Context, memberID string, sc trading.Scope, w trading.Walk, keep func(trading.Fill) bool) ([]trading.Fill, bool, error)
}

// Store is the part of the store the job uses; *store.Store is one.
type Store interface {
	ReferredMembers(ctx context.Context, after string, limit int) ([]store.ReferredMember, error)
	FillCursor(ctx context.Context, memberID, exchange, marketType string) (time.Time, bool, error)
	SetFillCursor(ctx context.Context, memberID, exchange, marketType string, at time.Time) error
	AddReward(ctx context.Context, r store.Reward) (store.Reward, error)
}

// Job is the rewards job. Run it on a goroutine its owner stops by cancelling the context.
type Job struct {
	cfg   Config
	rate  decimal.Decimal
	st    Store
	fills Fills
	log   *slog.Logger
	now   func() time.Time
}

// Option adjusts New.
type Option func(*Job)

// WithClock sets the job's clock (tests).
func WithClock(now func() time.Time) Option { return func(j *Job) { j.now = now } }

// New builds the job; cfg must be valid.
func New(cfg Config, st Store, fills Fills, log *slog.Logger, opts ...Option) (*Job, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("rewards: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	j := &Job{cfg: cfg, rate: cfg.rate(), st: st, fills: fills, log: log, now: time.Now}
	for _, o := range opts {
		o(j)
	}
	return j, nil
}

// Run passes over the referees every cfg.Interval until ctx ends. A failed pass is logged and retried next time.
func (j *Job) Run(ctx context.Context) error {
	t := time.NewTicker(j.cfg.Interval)
	defer t.Stop()
	for {
		if n, err := j.Pass(ctx); err != nil && ctx.Err() == nil {
			j.log.Warn("referral rewards pass failed", "err", err)
		} else if n > 0 {
			j.log.Info("referral rewards recorded", "rewards", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// markets are the market types whose fills pay fees.
var markets = []string{"SPOT", "SWAP"}

// Pass reads every referee's new fills once and records their rewards; it returns how many rewards it wrote. A
// referee whose fills cannot be read now (exchange down, no account yet) is skipped with a log line and its cursor
// kept, so the next pass tries again.
func (j *Job) Pass(ctx context.Context) (int, error) {
	if j.rate.IsZero() {
		return 0, nil
	}
	written := 0
	after := ""
	for {
		refs, err := j.st.ReferredMembers(ctx, after, store.MaxReferredMembers)
		if err != nil {
			return written, err
		}
		for _, ref := range refs {
			for _, ex := range j.fills.HistoryExchanges() {
				if err := ctx.Err(); err != nil {
					return written, err
				}
				has, err := j.fills.HasAccount(ctx, ref.ID, ex)
				if err != nil {
					j.log.Warn("referral rewards: account lookup failed", "member", ref.ID, "exchange", ex, "err", err)
					continue
				}
				if !has {
					continue
				}
				for _, mt := range markets {
					n, err := j.account(ctx, ref, ex, mt)
					written += n
					if err != nil {
						if ctx.Err() != nil {
							return written, ctx.Err()
						}
						j.log.Warn("referral rewards: reading fills failed", "member", ref.ID, "exchange", ex,
							"market", mt, "err", err)
					}
				}
			}
		}
		if len(refs) < store.MaxReferredMembers {
			return written, nil
		}
		after = refs[len(refs)-1].ID
	}
}

// account reads one referee's fills on one market of an exchange, window after window from the cursor up to now,
// and moves the cursor past each window read to its end.
func (j *Job) account(ctx context.Context, ref store.ReferredMember, exchange, market string) (int, error) {
	cursor, ok, err := j.st.FillCursor(ctx, ref.ID, exchange, market)
	if err != nil {
		return 0, err
	}
	if !ok {
		// Fees count from the day the referee joined.
		cursor = ref.JoinedAt
	}
	now := j.now().UTC()
	written := 0
	for range j.cfg.MaxWindows {
		if !cursor.Before(now) {
			return written, nil
		}
		start := cursor.Add(-j.cfg.Overlap)
		end := cursor.Add(j.cfg.Window)
		if end.After(now) {
			end = now
		}
		fills, complete, err := j.fills.WalkFills(ctx, ref.ID, trading.Scope{Exchange: exchange, MarketType: market},
			trading.Walk{Start: start.UnixMilli(), End: end.UnixMilli()}, nil)
		if err != nil {
			if trading.IsNotSupported(err) {
				return written, nil
			}
			return written, err
		}
		for _, f := range fills {
			ok, err := j.record(ctx, ref, exchange, market, f)
			if err != nil {
				return written, err
			}
			if ok {
				written++
			}
		}
		if !complete {
			// More fills in this window than one walk reads: keep the cursor; the fills read are recorded (and
			// never twice), and the next pass reads the window again.
			j.log.Warn("referral rewards: window not read to its end", "member", ref.ID, "exchange", exchange,
				"market", market, "from", start, "to", end)
			return written, nil
		}
		if err := j.st.SetFillCursor(ctx, ref.ID, exchange, market, end); err != nil {
			return written, err
		}
		cursor = end
	}
	return written, nil
}

// SourceRef names the fill a reward comes from: unique per exchange, market, symbol, trade and referee (both
// sides of one trade can be referees of the same member).
func SourceRef(exchange, market string, f trading.Fill, refereeID string) string {
	return strings.Join([]string{"fill", exchange, market, f.Symbol, f.TradeID, refereeID}, ":")
}

// Amount is the reward of a fee at rate, cut (never rounded up) to 8 decimals; zero for no fee or a rebate.
func Amount(fee string, rate decimal.Decimal) decimal.Decimal {
	v, err := decimal.NewFromString(strings.TrimSpace(fee))
	if err != nil || !v.IsPositive() {
		return decimal.Zero
	}
	return v.Mul(rate).Truncate(8)
}

// record writes the reward of one fill (false: none due, or already recorded).
func (j *Job) record(ctx context.Context, ref store.ReferredMember, exchange, market string, f trading.Fill) (bool, error) {
	amount := Amount(f.Fee, j.rate)
	coin := strings.ToUpper(strings.TrimSpace(f.FeeAsset))
	if !amount.IsPositive() || coin == "" || f.TradeID == "" {
		return false, nil
	}
	_, err := j.st.AddReward(ctx, store.Reward{MemberID: ref.ReferredBy, RefereeID: ref.ID, Amount: amount, Coin: coin,
		SourceRef: SourceRef(exchange, market, f, ref.ID)})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrConflict):
		return false, nil
	case errors.Is(err, store.ErrInvalid):
		// A fee in a coin the store refuses, say: nothing to pay, but say so.
		j.log.Warn("referral rewards: fill skipped", "member", ref.ID, "exchange", exchange, "trade", f.TradeID, "err", err)
		return false, nil
	}
	return false, err
}
