package api

import (
	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/api/wallet"
	"github.com/exhub/exhub/bff/internal/market"
)

// walletDeps are the wallet routes' collaborators out of the API's (a nil service stays a nil interface, so the
// routes that need it answer 503).
func walletDeps(d Deps, m *market.Service) wallet.Deps {
	wd := wallet.Deps{Guard: d.Auth, Exchanges: exchangeSlugs(d.Config), NoAccount: accounts.ErrNoAccount, Logger: d.Logger}
	if d.Accounts != nil {
		wd.Accounts = d.Accounts
	}
	if d.Host != nil {
		wd.Plugins = d.Host
	}
	if m != nil {
		wd.Prices = m
	}
	if d.Members != nil {
		wd.Store = d.Members.Store()
	}
	wd.Wallet = d.Wallet
	if c := d.Config; c != nil {
		w := c.Wallet
		wd.Settings.Faucet = c.Mode == "demo" && d.Wallet != nil
		if wd.Settings.Faucet {
			wd.Settings.FaucetAsset, wd.Settings.FaucetAmount = w.FaucetAsset, w.FaucetAmount
		}
		if w.FeeFreeExchange != "" {
			wd.Settings.FeeFree = &wallet.FeeFree{Exchange: w.FeeFreeExchange, Asset: w.FeeFreeAsset, Min: w.FeeFreeMin, Max: w.FeeFreeMax}
		}
	}
	return wd
}
