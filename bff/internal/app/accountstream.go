package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/exhub/exhub/bff/internal/accounts"
	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/cache"
	"github.com/exhub/exhub/bff/internal/store"
	"github.com/exhub/exhub/bff/internal/stream"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// accountStreamPrefix keys the private account streams in Valkey, apart from the market gateway's topics.
const accountStreamPrefix = "exhub:account:"

// newAccountStreams builds the private account stream manager (one plugin account stream per account that a
// browser or the order journal wants, led by one replica through Valkey). Without exchange accounts it stays nil and
// the stream gateway answers private subscriptions 503.
func (b *BFF) newAccountStreams(context.Context) error {
	if b.accounts == nil {
		return nil
	}
	var broker stream.Broker
	if v, ok := b.cache.(*cache.Valkey); ok {
		broker = stream.NewValkeyBroker(stream.ValkeyOptions{Client: v.Client(), Prefix: accountStreamPrefix,
			LeaseTTL: b.cfg.Stream.LeaseTTL.D(), LastTTL: 10 * time.Minute, Logger: b.log})
	}
	b.accountStreams = accountstream.New(accountstream.Options{Source: accountstream.HostSource{Host: b.host},
		Accounts: streamAccounts{b.accounts}, Broker: broker, Logger: b.log})
	b.metrics.RegisterAccountStream(b.accountStreams)
	return nil
}

func (b *BFF) runAccountStreams(ctx context.Context) error {
	if b.accountStreams == nil {
		return nil
	}
	return b.accountStreams.Run(ctx)
}

// streamAccounts shows the accounts service to the account stream manager: every account that is or will be usable
// (a broker account still being made is listed; its stream starts once it is active), and AccountRef with the
// manager's not-found error.
type streamAccounts struct{ s *accounts.Service }

func (a streamAccounts) Accounts(ctx context.Context, memberID string) ([]accountstream.Account, error) {
	list, err := a.s.List(ctx, memberID)
	if err != nil {
		return nil, err
	}
	out := make([]accountstream.Account, 0, len(list))
	for _, x := range list {
		if x.Status == store.AccountFailed {
			continue
		}
		out = append(out, accountstream.Account{ID: x.ID, Exchange: x.Exchange})
	}
	return out, nil
}

func (a streamAccounts) AccountRef(ctx context.Context, memberID, exchange string) (*exchangev1.AccountRef, error) {
	ref, err := a.s.AccountRef(ctx, memberID, exchange)
	if errors.Is(err, accounts.ErrNoAccount) {
		return nil, fmt.Errorf("%w: %w", feed.ErrNoAccount, err)
	}
	return ref, err
}
