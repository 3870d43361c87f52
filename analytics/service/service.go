// Package service runs analytics inside the BFF: it connects to ClickHouse (waiting for it), applies the schema
// migrations, runs the batching writer, backfills history from every running plugin (in demo mode the venue's
// generated history on first start, then a gap check every BackfillInterval), and ingests the plugins' live
// streams. The BFF adapts its plugin host to the Exchange interface here.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/exhub/exhub/analytics/backfill"
	"github.com/exhub/exhub/analytics/ingest"
	"github.com/exhub/exhub/analytics/query"
	"github.com/exhub/exhub/analytics/schema"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// Exchange is one plugin as analytics sees it.
type Exchange interface {
	Slug() string
	// WaitRunning blocks until the plugin runs (or ctx ends).
	WaitRunning(ctx context.Context) error
	// Client is the running plugin's client.
	Client() (exchangev1.ExchangeClient, error)
	// Describe is the plugin's cached Describe answer (nil before it first ran).
	Describe() *exchangev1.DescribeResponse
	// OpenStream opens a durable market stream.
	OpenStream(ctx context.Context) Stream
}

// Config configures the service.
type Config struct {
	// Addr is ClickHouse's native address, HTTPAddr its HTTP interface (exports).
	Addr, HTTPAddr string
	Schema         schema.Options
	SpoolDir       string
	SpoolMaxBytes  int64
	BatchRows      int
	FlushInterval  time.Duration
	// BackfillDays of history are kept complete (0: no backfill).
	BackfillDays int
	// BackfillPeriods of the derivatives series are backfilled (e.g. 5m, 1h).
	BackfillPeriods []string
	// BackfillInterval between gap checks after the first backfill.
	BackfillInterval time.Duration
	// Symbols restricts backfill and live ingest to these symbols; empty: every instrument, at most MaxSymbols per
	// exchange and market type.
	Symbols    []string
	MaxSymbols int
	// FirstBases are the base assets taken (and backfilled) first, in this order, before the exchange's list order
	// (default BTC, ETH, SOL, XRP, DOGE: the markets a new user sees first).
	FirstBases []string
	// Live turns on live stream ingest.
	Live      bool
	Exchanges []Exchange
	// Lease, when set, makes live ingest and backfill of each exchange run on one replica at a time (the holder of
	// "ingest:<exchange>"); nil: this replica runs them for every exchange.
	Lease  Lease
	Logger *slog.Logger
}

// ExchangeStatus is what the service is doing for one exchange.
type ExchangeStatus struct {
	Exchange string
	// Leading is true while this replica runs the exchange's ingest (always, without a Lease, once it started).
	Leading bool
	// LiveRows counts rows taken from the live stream, by table.
	LiveRows map[string]uint64
	// BackfillInstruments of the pass under way (or the last one); BackfillDone of them are done.
	BackfillInstruments, BackfillDone int
	// BackfillRows counts rows written by backfill; BackfillPasses completed passes; BackfillLastPass is when the
	// last one ended (Unix ms, 0: none yet).
	BackfillRows, BackfillPasses uint64
	BackfillLastPass             int64
}

// exchangeState holds one exchange's ExchangeStatus, guarded by Service.mu, and its live row counters by table
// (fixed after New, counted without the lock).
type exchangeState struct {
	ExchangeStatus
	live map[string]*atomic.Uint64
}

// Service is the running analytics.
type Service struct {
	cfg   Config
	log   *slog.Logger
	ready atomic.Bool

	mu     sync.Mutex
	conn   driver.Conn
	writer *ingest.Writer
	status map[string]*exchangeState
}

// New prepares the service; nothing connects before Run.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxSymbols <= 0 {
		cfg.MaxSymbols = 20
	}
	if cfg.FirstBases == nil {
		cfg.FirstBases = []string{"BTC", "ETH", "SOL", "XRP", "DOGE"}
	}
	if cfg.BackfillInterval <= 0 {
		cfg.BackfillInterval = 10 * time.Minute
	}
	s := &Service{cfg: cfg, log: cfg.Logger.With("component", "analytics"), status: map[string]*exchangeState{}}
	for _, ex := range cfg.Exchanges {
		st := &exchangeState{ExchangeStatus: ExchangeStatus{Exchange: ex.Slug()}, live: map[string]*atomic.Uint64{}}
		for _, t := range schema.Tables {
			st.live[t.Name] = new(atomic.Uint64)
		}
		s.status[ex.Slug()] = st
	}
	return s
}

// Exchanges reports what the service does for each exchange, sorted by slug.
func (s *Service) Exchanges() []ExchangeStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ExchangeStatus, 0, len(s.status))
	for _, st := range s.status {
		c := st.ExchangeStatus
		c.LiveRows = make(map[string]uint64, len(st.live))
		for t, n := range st.live {
			if v := n.Load(); v > 0 {
				c.LiveRows[t] = v
			}
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b ExchangeStatus) int { return strings.Compare(a.Exchange, b.Exchange) })
	return out
}

// Leading reports whether this replica runs the ingest of the exchange.
func (s *Service) Leading(slug string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status[slug]
	return st != nil && st.Leading
}

func (s *Service) update(slug string, fn func(*ExchangeStatus)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.status[slug]; st != nil {
		fn(&st.ExchangeStatus)
	}
}

// ErrNotReady is returned by Store and Exporter before the schema is in place.
var ErrNotReady = errors.New("analytics store is not ready (ClickHouse unreachable or migrating)")

// Store returns the query store once the schema is applied.
func (s *Service) Store() (*query.Store, error) {
	if !s.ready.Load() {
		return nil, ErrNotReady
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &query.Store{Conn: s.conn, Database: s.database()}, nil
}

// Exporter returns the exporter once the schema is applied.
func (s *Service) Exporter() (*query.Exporter, error) {
	if !s.ready.Load() {
		return nil, ErrNotReady
	}
	return &query.Exporter{HTTPAddr: s.cfg.HTTPAddr, Database: s.database()}, nil
}

// Stats are the writer's counters (zero before Run connected).
func (s *Service) Stats() ingest.Stats {
	s.mu.Lock()
	w := s.writer
	s.mu.Unlock()
	if w == nil {
		return ingest.Stats{}
	}
	return w.Stats()
}

func (s *Service) database() string {
	if s.cfg.Schema.Database == "" {
		return "exhub"
	}
	return s.cfg.Schema.Database
}

// Run connects, migrates and runs ingest and backfill until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr: []string{s.cfg.Addr}, Auth: clickhouse.Auth{Database: "default", Username: "default"},
		DialTimeout: 3 * time.Second, ReadTimeout: 60 * time.Second, MaxOpenConns: 8,
	})
	if err != nil {
		return fmt.Errorf("analytics: %w", err)
	}
	defer conn.Close()
	for wait := 500 * time.Millisecond; ; wait = min(2*wait, 30*time.Second) {
		err := schema.Apply(ctx, conn, s.cfg.Schema, s.log)
		if err == nil {
			break
		}
		s.log.Warn("analytics: ClickHouse not ready, retrying", "addr", s.cfg.Addr, "err", err, "retry_in", wait.String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	w, err := ingest.New(ingest.Config{Conn: conn, Database: s.database(), SpoolDir: s.cfg.SpoolDir,
		SpoolMaxBytes: s.cfg.SpoolMaxBytes, BatchRows: s.cfg.BatchRows, FlushInterval: s.cfg.FlushInterval, Logger: s.cfg.Logger})
	if err != nil {
		return fmt.Errorf("analytics: %w", err)
	}
	s.mu.Lock()
	s.conn, s.writer = conn, w
	s.mu.Unlock()
	s.ready.Store(true)
	s.log.Info("analytics ready", "addr", s.cfg.Addr, "database", s.database())

	var wg sync.WaitGroup
	wctx, stopWriter := context.WithCancel(context.Background())
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(wctx) }() // owned by Run; stops after the producers below
	var prod sync.WaitGroup
	for _, ex := range s.cfg.Exchanges {
		prod.Add(1)
		go func() { // owned by Run: one per exchange, ends with ctx
			defer prod.Done()
			s.runExchange(ctx, conn, w, ex)
		}()
	}
	prod.Wait()
	stopWriter()
	wg.Wait()
	return nil
}

type instrument struct {
	mt     exchangev1.MarketType
	symbol string
	// rank is the base's place in FirstBases (len(FirstBases) for the others).
	rank int
}

func (s *Service) instruments(ctx context.Context, c exchangev1.ExchangeClient) ([]instrument, error) {
	var out []instrument
	for _, mt := range []exchangev1.MarketType{exchangev1.MarketType_MARKET_TYPE_SWAP, exchangev1.MarketType_MARKET_TYPE_SPOT} {
		r, err := c.ListInstruments(ctx, &exchangev1.ListInstrumentsRequest{MarketType: mt})
		if err != nil {
			return nil, err
		}
		list := slices.Clone(r.GetInstruments())
		rank := func(in *exchangev1.Instrument) int {
			if i := slices.Index(s.cfg.FirstBases, in.GetBase()); i >= 0 {
				return i
			}
			return len(s.cfg.FirstBases)
		}
		slices.SortStableFunc(list, func(a, b *exchangev1.Instrument) int { return rank(a) - rank(b) })
		n := 0
		for _, in := range list {
			if in.GetStatus() != exchangev1.InstrumentStatus_INSTRUMENT_STATUS_TRADING {
				continue
			}
			if len(s.cfg.Symbols) > 0 && !slices.Contains(s.cfg.Symbols, in.GetSymbol()) {
				continue
			}
			if n >= s.cfg.MaxSymbols {
				break
			}
			out = append(out, instrument{mt: mt, symbol: in.GetSymbol(), rank: rank(in)})
			n++
		}
	}
	// The first bases' markets of every market type come before the rest of either (BTC swap, BTC spot, ETH swap,
	// ...): otherwise the default spot markets waited for every other swap market's backfill.
	slices.SortStableFunc(out, func(a, b instrument) int { return a.rank - b.rank })
	return out, nil
}

// runExchange runs one exchange's ingest until ctx ends; with a Lease only while this replica holds it, taking it
// again whenever it is free.
func (s *Service) runExchange(ctx context.Context, conn driver.Conn, w *ingest.Writer, ex Exchange) {
	log := s.log.With("exchange", ex.Slug())
	if s.cfg.Lease == nil {
		s.update(ex.Slug(), func(st *ExchangeStatus) { st.Leading = true })
		s.ingestExchange(ctx, conn, w, ex, log)
		return
	}
	for ctx.Err() == nil {
		held, release, err := s.cfg.Lease.Acquire(ctx, "ingest:"+ex.Slug())
		if err != nil {
			return
		}
		log.Info("analytics: this replica runs the exchange's ingest (lease taken)")
		s.update(ex.Slug(), func(st *ExchangeStatus) { st.Leading = true })
		s.ingestExchange(held, conn, w, ex, log)
		<-held.Done() // ingest ends with the lease; with nothing to run the lease is still held until then
		release()
		s.update(ex.Slug(), func(st *ExchangeStatus) { st.Leading = false })
		if ctx.Err() == nil {
			log.Warn("analytics: ingest lease lost; another replica runs the exchange's ingest")
		}
	}
}

func (s *Service) ingestExchange(ctx context.Context, conn driver.Conn, w *ingest.Writer, ex Exchange, log *slog.Logger) {
	if err := ex.WaitRunning(ctx); err != nil {
		return
	}
	var ins []instrument
	for wait := time.Second; ; wait = min(2*wait, time.Minute) {
		c, err := ex.Client()
		if err == nil {
			ins, err = s.instruments(ctx, c)
		}
		if err == nil {
			break
		}
		log.Warn("analytics: cannot list instruments, retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	var wg sync.WaitGroup
	if s.cfg.Live && len(ins) > 0 {
		st := ex.OpenStream(ctx)
		var subs []*exchangev1.Subscription
		for _, in := range ins {
			subs = append(subs, Subscriptions(in.mt, in.symbol)...)
		}
		if err := st.Subscribe(ctx, subs...); err != nil {
			log.Warn("analytics: live subscribe failed", "err", err)
		}
		wg.Add(1)
		go func() { // owned by runExchange; ends with ctx or the stream
			defer wg.Done()
			defer st.Close()
			counters := s.status[ex.Slug()].live // fixed after New
			consume(ctx, w, ex.Slug(), st, func(table string) {
				if c := counters[table]; c != nil {
					c.Add(1)
				}
			})
		}()
		log.Info("analytics live ingest", "instruments", len(ins), "subscriptions", len(subs))
	}
	if s.cfg.BackfillDays > 0 {
		bf := &backfill.Backfiller{Conn: conn, Database: s.database(), Writer: w, Logger: s.log}
		for {
			s.backfillOnce(ctx, bf, ex, ins, log)
			select {
			case <-ctx.Done():
			case <-time.After(s.cfg.BackfillInterval):
				continue
			}
			break
		}
	}
	wg.Wait()
}

func (s *Service) backfillOnce(ctx context.Context, bf *backfill.Backfiller, ex Exchange, ins []instrument, log *slog.Logger) {
	c, err := ex.Client()
	d := ex.Describe()
	if err != nil || d == nil {
		log.Warn("analytics: backfill skipped, plugin not running", "err", err)
		return
	}
	start := time.Now()
	// Up to the end of the last closed minute: the forming one is live ingest's. A forming candle written by
	// backfill could land after live ingest stored the closed one and, being newer, replace it for good.
	to := start.UnixMilli()/60_000*60_000 - 1
	from := to - int64(s.cfg.BackfillDays)*86_400_000
	s.update(ex.Slug(), func(st *ExchangeStatus) { st.BackfillInstruments, st.BackfillDone = len(ins), 0 })
	// Candles and the derivatives series come from different endpoints with their own rate limits: one goroutine
	// walks the instruments for each, so the default markets' candles never wait behind another market's series.
	parts := []backfill.Part{backfill.PartCandles, backfill.PartSeries}
	remaining := make([]atomic.Int32, len(ins)) // parts still to run per instrument
	for i := range remaining {
		remaining[i].Store(int32(len(parts)))
	}
	var rows atomic.Int64
	var wg sync.WaitGroup
	for _, part := range parts {
		wg.Add(1)
		go func() { // owned by backfillOnce: one per part, ends with the pass or ctx
			defer wg.Done()
			for i, in := range ins {
				if ctx.Err() != nil {
					return
				}
				r, err := bf.Symbol(ctx, c, d, backfill.Plan{Exchange: ex.Slug(), MarketType: in.mt, Symbol: in.symbol,
					From: from, To: to, Periods: s.cfg.BackfillPeriods, Part: part})
				rows.Add(int64(r.Rows))
				done := remaining[i].Add(-1) == 0
				s.update(ex.Slug(), func(st *ExchangeStatus) {
					if done {
						st.BackfillDone++
					}
					st.BackfillRows += uint64(r.Rows)
				})
				if err != nil && ctx.Err() == nil {
					log.Warn("analytics: backfill incomplete", "symbol", in.symbol, "err", err)
				}
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	s.update(ex.Slug(), func(st *ExchangeStatus) { st.BackfillPasses++; st.BackfillLastPass = time.Now().UnixMilli() })
	log.Info("analytics backfill pass done", "instruments", len(ins), "rows", rows.Load(), "duration_ms", time.Since(start).Milliseconds())
}
