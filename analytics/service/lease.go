package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"
)

// Lease lets one replica at a time run something for a key: with several BFF replicas, live ingest and backfill
// of one exchange run on the replica that holds the lease "ingest:<exchange>".
type Lease interface {
	// Acquire blocks until this replica holds key (or ctx ends, with ctx's error). The returned context ends when
	// the lease is lost or ctx ends; release stops renewing and gives the lease back. release must be called.
	Acquire(ctx context.Context, key string) (held context.Context, release func(), err error)
}

// ValkeyLease is a Lease in Valkey, like the stream gateway's upstream leases: the holder's id is the value of
// <prefix><key> (SET NX PX TTL), renewed every TTL/3 only by its holder; when the holder dies the key lapses and a
// waiting replica takes it within about TTL + TTL/3.
type ValkeyLease struct {
	c      valkey.Client
	id     string
	ttl    time.Duration
	prefix string
	log    *slog.Logger
	// keepOnRelease leaves the key to lapse instead of deleting it (tests that simulate a crash).
	keepOnRelease bool
}

// ValkeyLeaseOptions configure a ValkeyLease.
type ValkeyLeaseOptions struct {
	// Client is an open valkey-go client (the BFF's cache client can be shared).
	Client valkey.Client
	// TTL is how long a lease lives without renewal (10 s).
	TTL time.Duration
	// Prefix of every key ("exhub:analytics:lease:").
	Prefix string
	// ReplicaID names this replica in leases (random when empty).
	ReplicaID string
	Logger    *slog.Logger
}

// NewValkeyLease returns a lease on the given client.
func NewValkeyLease(o ValkeyLeaseOptions) *ValkeyLease {
	if o.TTL <= 0 {
		o.TTL = 10 * time.Second
	}
	if o.Prefix == "" {
		o.Prefix = "exhub:analytics:lease:"
	}
	if o.ReplicaID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.ReplicaID = hex.EncodeToString(b[:])
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &ValkeyLease{c: o.Client, id: o.ReplicaID, ttl: o.TTL, prefix: o.Prefix,
		log: o.Logger.With("component", "analytics")}
}

// ID is this replica's id in leases.
func (l *ValkeyLease) ID() string { return l.id }

var (
	renewLease   = valkey.NewLuaScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`)
	releaseLease = valkey.NewLuaScript(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`)
)

// Acquire implements Lease.
func (l *ValkeyLease) Acquire(ctx context.Context, key string) (context.Context, func(), error) {
	k := l.prefix + key
	every := l.ttl / 3
	tick := time.NewTicker(every)
	defer tick.Stop()
	warned := false
	for {
		cctx, cancel := context.WithTimeout(ctx, every)
		ok, err := l.c.Do(cctx, l.c.B().Set().Key(k).Value(l.id).Nx().Px(l.ttl).Build()).AsBool()
		cancel()
		if err == nil && ok {
			break
		}
		if err != nil && !valkey.IsValkeyNil(err) && ctx.Err() == nil && !warned {
			l.log.Warn("analytics: cannot reach Valkey for the ingest lease, retrying", "key", k, "err", err)
			warned = true
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-tick.C:
		}
	}
	held, lose := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { // owned by the lease: renews until release, loss or ctx's end
		defer close(done)
		defer lose()
		t := time.NewTicker(every)
		defer t.Stop()
		renewed := time.Now()
		ttl := strconv.FormatInt(l.ttl.Milliseconds(), 10)
		for {
			select {
			case <-held.Done():
				return
			case <-t.C:
			}
			cctx, cancel := context.WithTimeout(held, every)
			n, err := renewLease.Exec(cctx, l.c, []string{k}, []string{l.id, ttl}).AsInt64()
			cancel()
			switch {
			case err == nil && n == 1:
				renewed = time.Now()
			case err == nil:
				l.log.Warn("analytics: ingest lease lost to another replica", "key", k)
				return
			case time.Since(renewed) > l.ttl-every:
				// Not renewed for too long: another replica may hold it by now.
				l.log.Warn("analytics: ingest lease not renewed in time, giving it up", "key", k, "err", err)
				return
			}
		}
	}()
	release := func() {
		lose()
		<-done
		if l.keepOnRelease {
			return
		}
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = releaseLease.Exec(cctx, l.c, []string{k}, []string{l.id}).Error()
	}
	return held, release, nil
}
