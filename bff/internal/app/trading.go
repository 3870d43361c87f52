package app

import (
	"context"
	"fmt"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/trading"
)

// newTrading builds the order path over the store (the journal), the plugins and the members' exchange accounts;
// the account streams feed it fills and order events. Without accounts (demo mode without a key-encryption key) it
// stays nil and the trading routes answer 503.
func (b *BFF) newTrading(context.Context) error {
	if b.accounts == nil {
		return nil
	}
	opts := []trading.Option{trading.WithLogger(b.log), trading.WithNoAccountError(accounts.ErrNoAccount)}
	if b.accountStreams != nil {
		opts = append(opts, trading.WithAccountFeed(b.accountStreams))
	}
	svc, err := trading.New(b.cfg.Trading, b.store, b.host, b.accounts, opts...)
	if err != nil {
		return fmt.Errorf("config: trading: %w", err)
	}
	b.trading = svc
	b.metrics.RegisterTrading(svc)
	return nil
}

// runTrading resolves unknown outcomes and reconciles the journal with the exchanges until ctx ends.
func (b *BFF) runTrading(ctx context.Context) error {
	if b.trading == nil {
		return nil
	}
	b.trading.Run(ctx)
	return nil
}
