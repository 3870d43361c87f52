package stream

import (
	"fmt"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/valkey-io/valkey-go"
)

// startValkey runs a real valkey-server on a free loopback port, stopped by PID when the test ends. A missing
// valkey-server fails the test (`make deps` installs it).
func startValkey(t *testing.T) string {
	t.Helper()
	addr, _ := startValkeyStoppable(t)
	return addr
}

// startValkeyStoppable is startValkey that also returns a function stopping the server early (SIGKILL, by PID).
func startValkeyStoppable(t *testing.T) (string, func()) {
	t.Helper()
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Fatalf("valkey-server not found (install it with `make deps`): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // owned by the test: ends with the server process
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	kill := func() {
		_ = cmd.Process.Kill()
		<-done
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr, kill
		}
		if time.Now().After(deadline) {
			t.Fatalf("valkey-server did not listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func valkeyClient(t *testing.T, addr string) valkey.Client {
	t.Helper()
	c, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTwoReplicasOneValkey runs two gateways, each with its own plugin host (its own reference plugin process),
// HTTP server and Valkey client, against one valkey-server. A client on each watches the same book and trades:
// both receive the stream while exactly one replica holds the upstream subscriptions. Then the holder dies
// without releasing its leases, and the other replica takes over within the lease TTL.
func TestTwoReplicasOneValkey(t *testing.T) {
	addr := startValkey(t)
	// Long enough that a renewal delayed by a busy machine (-race, two cores) does not hand a topic over mid-test.
	const ttl = 1500 * time.Millisecond
	var reps []*replica
	var brokers []*ValkeyBroker
	for i := range 2 {
		vc := valkeyClient(t, addr)
		b := NewValkeyBroker(ValkeyOptions{Client: vc, LeaseTTL: ttl, ReplicaID: fmt.Sprintf("replica-%d", i), KeepLeasesOnStop: true})
		r := startReplica(t, b, Config{}, fast)
		reps = append(reps, r)
		brokers = append(brokers, b)
		t.Cleanup(vc.Close) // runs after the replica stops (cleanups run last-in first-out)
	}
	var clients []*client
	var books []*localBook
	for i, r := range reps {
		c := dial(t, r.srv)
		c.send(sub("book", "BTCUSDT", "depth", 10))
		c.send(sub("trades", "BTCUSDT"))
		clients = append(clients, c)
		books = append(books, newLocalBook(t, 10))
		if i == 0 {
			// The first replica takes both leases before the second replica's client arrives, so the second must
			// join the existing upstreams rather than open its own.
			waitFor(t, 5*time.Second, "replica 0 to lead both topics", func() bool { return r.gw.Stats().Leading == 2 })
		}
	}
	trades := make([]int, 2)
	read := func(i int, wantUpdates, wantTrades int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for books[i].updates < wantUpdates || trades[i] < wantTrades {
			if time.Now().After(deadline) {
				t.Fatalf("client %d: %d book updates, %d trade messages after 10 s", i, books[i].updates, trades[i])
			}
			m := clients[i].next(5 * time.Second)
			switch m["type"] {
			case "trades":
				trades[i]++
			case "error":
				t.Fatalf("client %d: %v", i, m)
			}
			books[i].apply(m)
		}
	}
	for i := range 2 {
		read(i, 5, 3)
	}
	// Leases follow the upstreams: both on one replica.
	waitFor(t, 5*time.Second, "the leases to be counted", func() bool {
		return reps[0].gw.Stats().Leases+reps[1].gw.Stats().Leases == 2 && reps[0].gw.Stats().Leases != 1
	})
	l0, l1 := reps[0].gw.Stats().Leading, reps[1].gw.Stats().Leading
	if l0+l1 != 2 || (l0 != 0 && l1 != 0) {
		t.Fatalf("upstream topics held: replica 0 %d, replica 1 %d; want both on one replica", l0, l1)
	}
	holder, other := 0, 1
	if l1 == 2 {
		holder, other = 1, 0
	}
	if p := reps[other].gw.Stats().Published; p != 0 {
		t.Fatalf("the replica without the lease published %d messages", p)
	}
	// Kill the holder: its leases are left to expire, as after a crash.
	reps[holder].stop()
	killed := time.Now()
	waitFor(t, 3*ttl+time.Second, "the other replica to take over", func() bool { return reps[other].gw.Stats().Leading == 2 })
	took := time.Since(killed)
	if st := reps[other].gw.Stats(); st.Leases != 2 || st.BrokerErrors["publish"] != 0 {
		t.Fatalf("after the takeover: %d leases, %d publish errors", st.Leases, st.BrokerErrors["publish"])
	}
	t.Logf("replica %d took over %s after replica %d died (lease TTL %s)", other, took, holder, ttl)
	if took > 3*ttl {
		t.Fatalf("takeover after %s, lease TTL %s", took, ttl)
	}
	before, tBefore := books[other].updates, trades[other]
	read(other, before+5, tBefore+3)
	if !books[other].have {
		t.Fatal("surviving client has no book")
	}
}

// TestValkeyErrorsCounted: when Valkey dies under a leader, its failed publishes, the lost subscription connection
// and the failed re-subscriptions are counted (Stats.BrokerErrors, exported on /metrics).
func TestValkeyErrorsCounted(t *testing.T) {
	addr, kill := startValkeyStoppable(t)
	vc := valkeyClient(t, addr)
	b := NewValkeyBroker(ValkeyOptions{Client: vc, LeaseTTL: 900 * time.Millisecond})
	r := startReplica(t, b, Config{}, fast)
	t.Cleanup(vc.Close)
	c := dial(t, r.srv)
	c.send(sub("trades", "ETHUSDT"))
	c.until(10*time.Second, func(m map[string]any) bool { return m["type"] == "trades" })
	if st := r.gw.Stats(); st.Leases != 1 || st.Leading != 1 {
		t.Fatalf("before: %d leases, leading %d", st.Leases, st.Leading)
	}
	for op, n := range r.gw.Stats().BrokerErrors {
		if n != 0 {
			t.Fatalf("%d %s errors with Valkey up", n, op)
		}
	}
	kill()
	waitFor(t, 15*time.Second, "Valkey errors to be counted", func() bool {
		e := r.gw.Stats().BrokerErrors
		return e["publish"] > 0 && e["receive"] > 0 && e["subscribe"] > 0
	})
}
