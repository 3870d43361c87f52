package app

import (
	"context"

	"github.com/exhub/exhub/bff/internal/rewards"
)

// newRewards builds the referral rewards job over the store and the trading service's fill reads (nothing without
// the trading service: no accounts, no fills).
func (b *BFF) newRewards(context.Context) error {
	if !b.cfg.Rewards.Enabled || b.trading == nil {
		return nil
	}
	job, err := rewards.New(b.cfg.Rewards, b.store, b.trading, b.log)
	if err != nil {
		return err
	}
	b.rewards = job
	return nil
}

// runRewards records referral rewards from referees' fills until ctx ends.
func (b *BFF) runRewards(ctx context.Context) error {
	if b.rewards == nil {
		return nil
	}
	b.log.Info("referral rewards job on", "rate", b.cfg.Rewards.Rate, "interval", b.cfg.Rewards.Interval.String())
	return b.rewards.Run(ctx)
}
