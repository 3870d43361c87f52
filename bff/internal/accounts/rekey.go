package accounts

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/exhub/exhub/bff/internal/store"
)

// RekeyResult counts what Rekey did.
type RekeyResult struct {
	Resealed int // now under the active key
	Changed  int // changed or deleted while being resealed: left as they are (run again)
	Failed   int // did not open (a key missing from the keyring, a damaged row)
}

// Rekey re-encrypts every sealed record not under the keyring's active key, in pages, each row replaced only if
// it did not change meanwhile. Rows that do not open are counted and logged (never their content) and the rest go
// on; the error then says how many. Running BFFs keep serving throughout: they hold the old keys as well.
func Rekey(ctx context.Context, st *store.Store, k *Keyring, log *slog.Logger) (RekeyResult, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var res RekeyResult
	after := ""
	for {
		page, err := st.ExchangeAccountsToRekey(ctx, k.Active(), after, 200)
		if err != nil {
			return res, err
		}
		if len(page) == 0 {
			break
		}
		for _, a := range page {
			after = a.ID
			kek, blob, err := k.Reseal(a.KEKID, a.Sealed, Binding{MemberID: a.MemberID, AccountID: a.ID, Exchange: a.Exchange})
			if err != nil {
				res.Failed++
				log.Error("rekey: sealed credentials do not open", "account", a.ID, "member", a.MemberID, "exchange", a.Exchange,
					"kek", a.KEKID, "err", err)
				continue
			}
			ok, err := st.Resealed(ctx, a.ID, a.KEKID, a.Sealed, kek, blob)
			if err != nil {
				return res, err
			}
			if ok {
				res.Resealed++
			} else {
				res.Changed++
			}
		}
	}
	if res.Failed > 0 {
		return res, fmt.Errorf("accounts: rekey: %d record(s) did not open: keep their key in the keyring and look at the log", res.Failed)
	}
	return res, nil
}
