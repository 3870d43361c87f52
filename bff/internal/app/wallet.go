package app

import (
	"context"
	"fmt"

	"github.com/exhub/exhub/bff/internal/config"
	"github.com/exhub/exhub/bff/internal/servicegate"
	"github.com/exhub/exhub/bff/internal/wallet"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// newWallet builds the money-movement path over the store (the journal), the plugins and the members' exchange
// accounts; in broker mode the master credentials send gifts and demo funds, and Kratos' admin API finds a gift's
// recipient by e-mail. Without accounts (demo mode without a key-encryption key) it stays nil and the wallet's write
// routes answer 503.
func (b *BFF) newWallet(context.Context) error {
	if b.accounts == nil {
		return nil
	}
	masters := map[string]*exchangev1.AccountRef{}
	if b.cfg.Accounts.Broker.Enabled {
		creds, err := b.cfg.Accounts.Broker.Masters()
		if err != nil {
			return fmt.Errorf("config: accounts.broker.credentials: %w", err)
		}
		for slug, c := range creds {
			masters[slug] = &exchangev1.AccountRef{AccountId: "broker:" + slug, ApiKey: c.Key.Reveal(),
				ApiSecret: c.Secret.Reveal(), Passphrase: c.Passphrase.Reveal()}
		}
	}
	rules, names := config.GateRules(b.cfg.Exchanges)
	svc, err := wallet.New(wallet.Options{Config: b.cfg.Wallet, Store: b.store, Plugins: b.host, Accounts: b.accounts,
		Masters: masters, Directory: wallet.KratosDirectory{AdminURL: b.cfg.AuthConfig().KratosAdminURL},
		Gates: servicegate.New(rules, names, b.store), Demo: b.cfg.Mode == "demo", Logger: b.log})
	if err != nil {
		return fmt.Errorf("config: wallet: %w", err)
	}
	b.wallet = svc
	b.metrics.RegisterWallet(svc)
	return nil
}

// runWallet resolves unknown outcomes and follows movements on their way until ctx ends.
func (b *BFF) runWallet(ctx context.Context) error {
	if b.wallet == nil {
		return nil
	}
	b.wallet.Run(ctx)
	return nil
}
