package stream

import (
	"context"
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
	return startValkeyServer(t, "").addr
}

// valkeyServer is a valkey-server process of a test.
type valkeyServer struct {
	addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// kill ends the server at once (SIGKILL, by PID), as a crash would.
func (v *valkeyServer) kill() {
	_ = v.cmd.Process.Kill()
	<-v.done
}

// startValkeyServer starts valkey-server on addr (a free port when empty) and waits until it listens.
func startValkeyServer(t *testing.T, addr string) *valkeyServer {
	t.Helper()
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Fatalf("valkey-server not found (install it with `make deps`): %v", err)
	}
	if addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr = l.Addr().String()
		l.Close()
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	v := &valkeyServer{addr: addr, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(v.done) }() // owned by the test: ends with the server process
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-v.done:
		case <-time.After(patience):
			_ = cmd.Process.Kill()
			<-v.done
		}
	})
	waitFor(t, "valkey-server to listen on "+addr, func() bool {
		select {
		case <-v.done:
			t.Fatalf("valkey-server on %s exited", addr)
		default:
		}
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return v
}

func valkeyClient(t *testing.T, addr string) valkey.Client {
	t.Helper()
	c, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// expireLeases makes every stream lease in Valkey lapse now, as it does once its TTL passes without renewal: the
// tests bring a dead replica's lapse forward instead of waiting for it, so nothing in them depends on how fast the
// machine is (a TTL long enough for any renewal delay would otherwise make them slow).
func expireLeases(t *testing.T, vc valkey.Client) int {
	t.Helper()
	ctx := context.Background()
	keys, err := vc.Do(ctx, vc.B().Keys().Pattern("exhub:stream:lease:*").Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := vc.Do(ctx, vc.B().Pexpire().Key(k).Milliseconds(1).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	return len(keys)
}

// leaseTTL is the lease TTL of the tests: renewed every TTL/3, a lease is lost only when a renewal is more than a
// TTL late, which no busy machine makes happen.
const leaseTTL = 12 * time.Second

// TestTwoReplicasOneValkey runs two gateways, each with its own plugin host (its own reference plugin process),
// HTTP server and Valkey client, against one valkey-server. A client on each watches the same book and trades:
// both receive the stream while exactly one replica holds the upstream subscriptions. Then the holder dies
// without releasing its leases, and the other replica takes over once they lapse.
func TestTwoReplicasOneValkey(t *testing.T) {
	addr := startValkey(t)
	var reps []*replica
	var brokers []*ValkeyBroker
	for i := range 2 {
		vc := valkeyClient(t, addr)
		b := NewValkeyBroker(ValkeyOptions{Client: vc, LeaseTTL: leaseTTL, ReplicaID: fmt.Sprintf("replica-%d", i), KeepLeasesOnStop: true})
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
			waitFor(t, "replica 0 to lead both topics", func() bool { return r.gw.Stats().Leading == 2 })
		}
	}
	trades := make([]int, 2)
	read := func(i int, wantUpdates, wantTrades int) {
		t.Helper()
		deadline := time.Now().Add(patience)
		for books[i].updates < wantUpdates || trades[i] < wantTrades {
			m := clients[i].nextBy(deadline)
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
	// Leases follow the upstreams: both on replica 0, which took them first and keeps renewing them.
	waitFor(t, "the leases to be counted", func() bool {
		return reps[0].gw.Stats().Leases == 2 && reps[1].gw.Stats().Leases == 0
	})
	if l0, l1 := reps[0].gw.Stats().Leading, reps[1].gw.Stats().Leading; l0 != 2 || l1 != 0 {
		t.Fatalf("upstream topics held: replica 0 %d, replica 1 %d; want both on replica 0", l0, l1)
	}
	holder, other := 0, 1
	if p := reps[other].gw.Stats().Published; p != 0 {
		t.Fatalf("the replica without the lease published %d messages", p)
	}
	// Kill the holder: its leases are left in Valkey, as after a crash, and the other replica does not take them
	// while they live.
	reps[holder].stop()
	if st := reps[other].gw.Stats(); st.Leading != 0 || st.Leases != 0 {
		t.Fatalf("replica %d leads %d topics (%d leases) while the dead replica's leases live", other, st.Leading, st.Leases)
	}
	probe := valkeyClient(t, addr)
	t.Cleanup(probe.Close)
	if n := expireLeases(t, probe); n != 2 {
		t.Fatalf("%d leases in Valkey after the crash, want the dead replica's 2", n)
	}
	waitFor(t, "the other replica to take over", func() bool { return reps[other].gw.Stats().Leading == 2 })
	if st := reps[other].gw.Stats(); st.Leases != 2 || st.BrokerErrors["publish"] != 0 {
		t.Fatalf("after the takeover: %d leases, %d publish errors", st.Leases, st.BrokerErrors["publish"])
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
	vs := startValkeyServer(t, "")
	vc := valkeyClient(t, vs.addr)
	b := NewValkeyBroker(ValkeyOptions{Client: vc, LeaseTTL: leaseTTL})
	r := startReplica(t, b, Config{}, fast)
	t.Cleanup(vc.Close)
	c := dial(t, r.srv)
	c.send(sub("trades", "ETHUSDT"))
	c.until(func(m map[string]any) bool { return m["type"] == "trades" })
	if st := r.gw.Stats(); st.Leases != 1 || st.Leading != 1 {
		t.Fatalf("before: %d leases, leading %d", st.Leases, st.Leading)
	}
	for op, n := range r.gw.Stats().BrokerErrors {
		if n != 0 {
			t.Fatalf("%d %s errors with Valkey up", n, op)
		}
	}
	vs.kill()
	waitFor(t, "Valkey errors to be counted", func() bool {
		e := r.gw.Stats().BrokerErrors
		return e["publish"] > 0 && e["receive"] > 0 && e["subscribe"] > 0
	})
}

// TestLeaderStopsLeadingWhenValkeyIsUnreachable: a leader that cannot renew its lease stops leading (another
// replica may hold the topic by the time Valkey answers again), even while every SUBSCRIBE fails too; once Valkey is
// back it subscribes, takes the lease again and its client receives the stream.
func TestLeaderStopsLeadingWhenValkeyIsUnreachable(t *testing.T) {
	vs := startValkeyServer(t, "")
	vc := valkeyClient(t, vs.addr)
	// A short TTL: the renewal comes every TTL/3 and each failed one ends the lead; nothing here waits for a lapse.
	b := NewValkeyBroker(ValkeyOptions{Client: vc, LeaseTTL: 1500 * time.Millisecond})
	r := startReplica(t, b, Config{}, fast)
	t.Cleanup(vc.Close)
	c := dial(t, r.srv)
	c.send(sub("trades", "ETHUSDT"))
	c.until(func(m map[string]any) bool { return m["type"] == "trades" })
	waitFor(t, "the replica to lead", func() bool { st := r.gw.Stats(); return st.Leading == 1 && st.Leases == 1 })

	vs.kill()
	// The subscription connection is lost, so every pass re-subscribes and fails; the renewal must still run.
	waitFor(t, "the leader to stop leading", func() bool {
		st := r.gw.Stats()
		return st.Leading == 0 && st.Leases == 0 && st.BrokerErrors["lease"] > 0
	})
	if e := r.gw.Stats().BrokerErrors; e["subscribe"] == 0 {
		t.Fatalf("no failed SUBSCRIBE counted while Valkey was down: %v", e)
	}

	// Valkey comes back on the same address (empty: the old lease is gone with it).
	restarted := time.Now().UnixMicro()
	startValkeyServer(t, vs.addr)
	waitFor(t, "the replica to lead again", func() bool { st := r.gw.Stats(); return st.Leading == 1 && st.Leases == 1 })
	// Trades of the new lead reach the client. A topic's sequence starts from the clock when it is led, so the new
	// lead's messages are told from older ones still queued by their seq.
	c.until(func(m map[string]any) bool {
		seq, _ := m["seq"].(float64)
		return m["type"] == "trades" && int64(seq) > restarted
	})
}
