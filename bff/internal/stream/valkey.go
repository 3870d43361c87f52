package stream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"
)

// ValkeyBroker connects gateway replicas through one Valkey:
//
//   - interest: a replica whose clients watch a topic keeps itself in the sorted set <prefix>want:<topic>, scored
//     with an expiry it renews every TTL/3;
//   - leadership: the replica holding the key <prefix>lease:<topic> (SET NX PX TTL, renewed every TTL/3 only by its
//     holder) holds the one upstream subscription; any interested replica takes the lease when it lapses, so a
//     dead leader is replaced within about TTL + TTL/3; the leader gives the topic up (and the upstream) when no
//     replica wants it any more;
//   - delivery: the leader PUBLISHes each message once on <prefix>ev:<topic>; every interested replica SUBSCRIBEs to
//     it on a dedicated connection and hands it to its own clients; the last state message (book, ticker,
//     candle) is also kept under <prefix>last:<topic> so a replica that joins late starts from it.
type ValkeyBroker struct {
	c      valkey.Client
	id     string
	ttl    time.Duration
	prefix string
	log    *slog.Logger
	// lastTTL: how long <prefix>last:<topic> lives after its last SET.
	lastTTL time.Duration
	// releaseOnStop gives leases and interest back at shutdown (false only in tests that simulate a crash).
	releaseOnStop bool

	h brokerHandler

	mu   sync.Mutex
	want map[string]bool
	kick chan struct{}

	// owned by Run
	subscribed map[string]bool
	held       map[string]bool

	leases atomic.Int64 // len(held), for Stats
	errs   [numValkeyOps]atomic.Uint64
}

// Valkey operations that can fail (Stats.BrokerErrors).
const (
	opPublish = iota
	opReceive
	opSubscribe
	opInterest
	opLease
	opLast
	numValkeyOps
)

var valkeyOpNames = [numValkeyOps]string{"publish", "receive", "subscribe", "interest", "lease", "last"}

func (v *ValkeyBroker) stats() (int, map[string]uint64) {
	errs := make(map[string]uint64, numValkeyOps)
	for i, n := range valkeyOpNames {
		errs[n] = v.errs[i].Load()
	}
	return int(v.leases.Load()), errs
}

// ValkeyOptions configures a ValkeyBroker.
type ValkeyOptions struct {
	// Client is an open valkey-go client (the BFF's cache client can be shared).
	Client valkey.Client
	// LeaseTTL is how long a lease lives without renewal (3 s).
	LeaseTTL time.Duration
	// Prefix of every key and channel ("exhub:stream:").
	Prefix string
	// ReplicaID names this replica in leases (random when empty).
	ReplicaID string
	Logger    *slog.Logger
	// KeepLeasesOnStop leaves leases to expire instead of releasing them (tests that simulate a crash).
	KeepLeasesOnStop bool
	// LastTTL is how long a topic's last state is kept after its last update (1 min; the private account stream
	// keeps it longer, as an account can be quiet for hours).
	LastTTL time.Duration
}

// NewValkeyBroker returns a broker on the given client.
func NewValkeyBroker(o ValkeyOptions) *ValkeyBroker {
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 3 * time.Second
	}
	if o.Prefix == "" {
		o.Prefix = "exhub:stream:"
	}
	if o.ReplicaID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.ReplicaID = hex.EncodeToString(b[:])
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LastTTL <= 0 {
		o.LastTTL = time.Minute
	}
	return &ValkeyBroker{c: o.Client, id: o.ReplicaID, ttl: o.LeaseTTL, prefix: o.Prefix, log: o.Logger, lastTTL: o.LastTTL,
		releaseOnStop: !o.KeepLeasesOnStop, want: map[string]bool{}, kick: make(chan struct{}, 1),
		subscribed: map[string]bool{}, held: map[string]bool{}}
}

// Last reads the topic's last state message (<prefix>last:<topic>).
func (v *ValkeyBroker) Last(ctx context.Context, topic string) ([]byte, bool, error) {
	b, err := v.c.Do(ctx, v.c.B().Get().Key(v.prefix+"last:"+topic).Build()).AsBytes()
	if valkey.IsValkeyNil(err) {
		return nil, false, nil
	}
	if err != nil {
		v.errs[opLast].Add(1)
		return nil, false, fmt.Errorf("stream: valkey last %s: %w", topic, err)
	}
	return b, true, nil
}

// ID is this replica's id in leases.
func (v *ValkeyBroker) ID() string { return v.id }

func (v *ValkeyBroker) bind(h brokerHandler) { v.h = h }

func (v *ValkeyBroker) signal() {
	select {
	case v.kick <- struct{}{}:
	default:
	}
}

// Join registers local interest; Run subscribes and competes for the lease.
func (v *ValkeyBroker) Join(topic string) {
	v.mu.Lock()
	v.want[topic] = true
	v.mu.Unlock()
	v.signal()
}

// Leave withdraws local interest.
func (v *ValkeyBroker) Leave(topic string) {
	v.mu.Lock()
	delete(v.want, topic)
	v.mu.Unlock()
	v.signal()
}

// Publish sends the leader's messages in one pipeline.
func (v *ValkeyBroker) Publish(msgs []Message) {
	cmds := make(valkey.Commands, 0, 2*len(msgs))
	for _, m := range msgs {
		// The state is stored before it is published, so a replica that reads it after receiving a message never
		// gets an older one.
		if m.State || m.StateOnly {
			cmds = append(cmds, v.c.B().Set().Key(v.prefix+"last:"+m.Topic).Value(valkey.BinaryString(m.Payload)).
				Px(v.lastTTL).Build())
		}
		if !m.StateOnly {
			cmds = append(cmds, v.c.B().Publish().Channel(v.prefix+"ev:"+m.Topic).Message(valkey.BinaryString(m.Payload)).Build())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, r := range v.c.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			v.errs[opPublish].Add(1)
			v.log.Warn("stream: valkey publish", "err", err)
			return
		}
	}
}

var (
	renewScript   = valkey.NewLuaScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`)
	releaseScript = valkey.NewLuaScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`)
)

// Run keeps subscriptions, interest and leases in line with local interest until ctx ends.
func (v *ValkeyBroker) Run(ctx context.Context) error {
	tick := time.NewTicker(v.ttl / 3)
	defer tick.Stop()
	var (
		dc      valkey.DedicatedClient
		release func()
		dcErr   <-chan error
	)
	defer func() {
		if release != nil {
			release()
		}
		v.stop()
	}()
	for {
		if dc == nil {
			dc, release = v.c.Dedicate()
			dcErr = dc.SetPubSubHooks(valkey.PubSubHooks{OnMessage: func(m valkey.PubSubMessage) {
				if !v.h.deliver(strings.TrimPrefix(m.Channel, v.prefix+"ev:"), []byte(m.Message), false) {
					v.errs[opReceive].Add(1)
				}
			}})
			v.subscribed = map[string]bool{}
		}
		v.reconcile(ctx, dc)
		select {
		case <-ctx.Done():
			return nil
		case <-v.kick:
		case <-tick.C:
		case err := <-dcErr:
			v.errs[opReceive].Add(1)
			v.log.Warn("stream: valkey subscription connection lost; reconnecting", "err", err)
			release()
			dc, release = nil, nil
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// reconcile brings subscriptions, interest and leases in line with local interest. Its steps are independent: a
// failed one (Valkey unreachable) is counted and the others still run, so a leader whose lease cannot be renewed
// stops leading at once instead of at its next fully successful pass. Each step has its own time bound.
func (v *ValkeyBroker) reconcile(ctx context.Context, dc valkey.DedicatedClient) {
	v.mu.Lock()
	want := make(map[string]bool, len(v.want))
	for t := range v.want {
		want[t] = true
	}
	v.mu.Unlock()
	now := time.Now().UnixMilli()
	step := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, v.ttl/2) }

	// Subscriptions first, so no message published after we lead or read the last state is missed. A topic whose
	// SUBSCRIBE failed is not led by this replica (below) until a later pass subscribes it.
	unsub := v.syncSubscriptions(step, dc, want)

	// Interest.
	cctx, cancel := step()
	cmds := make(valkey.Commands, 0, 2*len(want)+len(unsub))
	for t := range want {
		cmds = append(cmds, v.c.B().Zadd().Key(v.prefix+"want:"+t).ScoreMember().ScoreMember(float64(now+v.ttl.Milliseconds()), v.id).Build(),
			v.c.B().Pexpire().Key(v.prefix+"want:"+t).Milliseconds(3*v.ttl.Milliseconds()).Build())
	}
	for _, t := range unsub {
		cmds = append(cmds, v.c.B().Zrem().Key(v.prefix+"want:"+t).Member(v.id).Build())
	}
	for _, r := range v.c.DoMulti(cctx, cmds...) {
		if err := r.Error(); err != nil {
			v.errs[opInterest].Add(1)
			v.log.Warn("stream: valkey interest", "err", err)
			break
		}
	}
	cancel()

	// Leases held: renew while some replica wants the topic, else give it up.
	ttl := strconv.FormatInt(v.ttl.Milliseconds(), 10)
	for t := range v.held {
		cctx, cancel := step()
		key := v.prefix + "lease:" + t
		if !want[t] {
			wk := v.prefix + "want:" + t
			_ = v.c.Do(cctx, v.c.B().Zremrangebyscore().Key(wk).Min("-inf").Max(strconv.FormatInt(now, 10)).Build()).Error()
			n, err := v.c.Do(cctx, v.c.B().Zcard().Key(wk).Build()).AsInt64()
			if err == nil && n == 0 {
				_ = releaseScript.Exec(cctx, v.c, []string{key}, []string{v.id}).Error()
				cancel()
				delete(v.held, t)
				v.h.unlead(t)
				continue
			}
		}
		n, err := renewScript.Exec(cctx, v.c, []string{key}, []string{v.id, ttl}).AsInt64()
		cancel()
		if err != nil {
			v.errs[opLease].Add(1)
		}
		if err != nil || n == 0 {
			// Lost (or cannot prove we hold it): stop leading; another replica may take over.
			v.log.Info("stream: lease lost", "topic", t, "err", err)
			delete(v.held, t)
			v.h.unlead(t)
		}
	}
	// Leases wanted: take those nobody holds, for topics this replica receives.
	for t := range want {
		if v.held[t] || !v.subscribed[t] {
			continue
		}
		cctx, cancel := step()
		ok, err := v.c.Do(cctx, v.c.B().Set().Key(v.prefix+"lease:"+t).Value(v.id).Nx().Px(v.ttl).Build()).AsBool()
		cancel()
		if err != nil && !valkey.IsValkeyNil(err) {
			v.errs[opLease].Add(1)
			v.log.Warn("stream: valkey lease", "topic", t, "err", err)
			continue
		}
		if ok {
			v.held[t] = true
			v.log.Debug("stream: lease taken", "topic", t, "replica", v.id)
			v.h.lead(t)
		}
	}
	v.leases.Store(int64(len(v.held)))
}

// syncSubscriptions subscribes the dedicated connection to the wanted topics' channels (handing each newly
// subscribed topic its last state) and unsubscribes the others. It returns the topics no longer wanted.
func (v *ValkeyBroker) syncSubscriptions(step func() (context.Context, context.CancelFunc), dc valkey.DedicatedClient,
	want map[string]bool) (unsub []string) {
	var sub []string
	for t := range want {
		if !v.subscribed[t] {
			sub = append(sub, t)
		}
	}
	for t := range v.subscribed {
		if !want[t] {
			unsub = append(unsub, t)
		}
	}
	if len(sub) > 0 {
		chans := make([]string, len(sub))
		for i, t := range sub {
			chans[i] = v.prefix + "ev:" + t
		}
		cctx, cancel := step()
		err := dc.Do(cctx, dc.B().Subscribe().Channel(chans...).Build()).Error()
		cancel()
		if err != nil {
			v.errs[opSubscribe].Add(1)
			v.log.Warn("stream: valkey subscribe", "err", err)
		} else {
			cctx, cancel := step()
			for _, t := range sub {
				v.subscribed[t] = true
				b, err := v.c.Do(cctx, v.c.B().Get().Key(v.prefix+"last:"+t).Build()).AsBytes()
				switch {
				case err == nil:
					if !v.h.deliver(t, b, true) {
						v.errs[opReceive].Add(1)
					}
				case !valkey.IsValkeyNil(err):
					v.errs[opLast].Add(1)
				}
			}
			cancel()
		}
	}
	if len(unsub) > 0 {
		chans := make([]string, len(unsub))
		for i, t := range unsub {
			chans[i] = v.prefix + "ev:" + t
			delete(v.subscribed, t)
		}
		cctx, cancel := step()
		err := dc.Do(cctx, dc.B().Unsubscribe().Channel(chans...).Build()).Error()
		cancel()
		if err != nil {
			v.errs[opSubscribe].Add(1)
			v.log.Warn("stream: valkey unsubscribe", "err", err)
		}
	}
	return unsub
}

// stop gives up every lease and interest (unless simulating a crash) and stops leading.
func (v *ValkeyBroker) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for t := range v.held {
		if v.releaseOnStop {
			_ = releaseScript.Exec(ctx, v.c, []string{v.prefix + "lease:" + t}, []string{v.id}).Error()
		}
		v.h.unlead(t)
	}
	v.held = map[string]bool{}
	v.leases.Store(0)
	if v.releaseOnStop {
		v.mu.Lock()
		defer v.mu.Unlock()
		for t := range v.want {
			_ = v.c.Do(ctx, v.c.B().Zrem().Key(v.prefix+"want:"+t).Member(v.id).Build()).Error()
		}
	}
}
