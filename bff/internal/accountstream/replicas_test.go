package accountstream_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/valkey-io/valkey-go"

	"github.com/exhub/exhub/bff/internal/accountstream"
	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	"github.com/exhub/exhub/bff/internal/auth/authtest"
	"github.com/exhub/exhub/bff/internal/stream"
)

func valkeyBroker(t *testing.T, addr, replica string) *stream.ValkeyBroker {
	t.Helper()
	c, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return stream.NewValkeyBroker(stream.ValkeyOptions{Client: c, Prefix: "exhub:account:", LeaseTTL: time.Second,
		ReplicaID: replica, LastTTL: 10 * time.Minute})
}

// TestTwoReplicas: replica A leads the member's account (its upstream on A's plugin); the member's browser on
// replica B gets A's events through Valkey; when A closes, B takes the lease, opens the upstream on its own plugin,
// and the browser sees a resync, a snapshot and then B's events.
func TestTwoReplicas(t *testing.T) {
	addr := authtest.StartValkey(t)
	hA, hB := startHost(t), startHost(t)
	accts := newAccounts()
	accts.add("member-a", "reference", "acct-a")
	id := startIdentity(t)
	id.login("cookie-a", "member-a")

	mA, stopA := startManager(t, accountstream.Options{Source: accountstream.HostSource{Host: hA}, Accounts: accts,
		Broker: valkeyBroker(t, addr, "a")})
	journal := feed.NewQueue(100000) // an in-process subscriber on A (the order journal's way in)
	cancel, err := mA.Subscribe(t.Context(), "member-a", "reference", journal)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	waitFor(t, "replica A to lead the account", func() bool { return mA.Stats().Leading == 1 })
	var got []feed.Update
	waitFor(t, "the journal's snapshot", func() bool {
		got = append(got, journal.Take()...)
		return len(got) > 0
	})
	if got[0].Kind != feed.KindSnapshot || len(got[0].Snapshot.Balances) == 0 {
		t.Fatalf("first journal update %+v", got[0])
	}

	mB, _ := startManager(t, accountstream.Options{Source: accountstream.HostSource{Host: hB}, Accounts: accts,
		Broker: valkeyBroker(t, addr, "b")})
	srv := startGateway(t, hB, mB, id.checker(t), stream.Config{})
	c := dial(t, srv, "cookie-a")
	c.send(privSub("1", "account", "reference"))
	ch := &chain{t: t, channel: "account"}
	c.until(func(m map[string]any) bool { ch.see(m); return ch.synced })

	// Events of A's upstream reach the browser on B, in order.
	for i := range 5 {
		placeMarket(t, hA, "acct-a", fmt.Sprintf("via-a-%d", i), "0.001")
	}
	filled := &fills{qty: map[string]decimal.Decimal{}}
	want := decimal.RequireFromString("0.001")
	c.until(func(m map[string]any) bool {
		ch.see(m)
		filled.add(m)
		for i := range 5 {
			if !filled.qty[fmt.Sprintf("via-a-%d", i)].Equal(want) {
				return false
			}
		}
		return true
	})
	for i, id := range filled.order {
		if id != fmt.Sprintf("via-a-%d", i) {
			t.Fatalf("fills in order %v", filled.order)
		}
	}
	if mB.Stats().Leading != 0 {
		t.Fatal("replica B leads as well")
	}

	// A closes: B takes the lease and the browser starts over from B's upstream.
	stopA()
	waitFor(t, "replica B to lead the account", func() bool { return mB.Stats().Leading == 1 })
	c.until(func(m map[string]any) bool { ch.see(m); return len(ch.resyncs) > 0 && ch.synced })
	if ch.resyncs[0] != "leader_changed" {
		t.Fatalf("resync reasons %v", ch.resyncs)
	}
	placeMarket(t, hB, "acct-a", "via-b", "0.001")
	c.until(func(m map[string]any) bool {
		ch.see(m)
		return m["type"] == "fill" && field(m, "fill", "clientOrderId") == "via-b"
	})
}
