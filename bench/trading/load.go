package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"
)

// market is the instrument every order goes to, with a resting price (far under the last price, so a buy rests)
// and the sizes.
type market struct {
	Exchange, Type, Symbol string
	RestPrice              string // limit price of the resting buys
	Qty                    string // limit order size (base units)
	MarketQty              string // market order size (base units)
	Last                   string
}

// body is the POST /api/v1/orders body for a side and order type (price for LIMIT).
func (m market) body(side, typ, price string) map[string]any {
	b := map[string]any{"exchange": m.Exchange, "market_type": m.Type, "symbol": m.Symbol, "side": side, "type": typ}
	if typ == "LIMIT" {
		b["price"] = price
		b["qty"] = m.Qty
		b["time_in_force"] = "GTC"
	} else {
		b["qty"] = m.MarketQty
	}
	if m.Type == "SWAP" {
		// With the margin mode named the BFF does not read it from the exchange before each order.
		b["margin_mode"] = "CROSS"
	}
	return b
}

// loadMarket reads the instrument's rules and last price through the edge and works out the order figures: the
// resting price is 80 % of the last price on the tick grid; sizes are about twice the minimum notional on the
// step grid (at least the minimum size).
func loadMarket(ctx context.Context, m *Member, exchange, typ, symbol string) (market, error) {
	mk := market{Exchange: exchange, Type: typ, Symbol: symbol}
	var inst struct {
		Instruments []struct {
			Symbol, TickSize, StepSize, MinQty, MinNotional, MarketStepSize, MarketMinQty string
		} `json:"instruments"`
	}
	if status, raw, err := m.do(ctx, http.MethodGet, "/api/v1/instruments?exchange="+exchange+"&type="+typ, nil, nil, &inst); err != nil || status != http.StatusOK {
		return mk, fmt.Errorf("instruments: status %d %v %.200s", status, err, raw)
	}
	var tk struct {
		Tickers []struct{ Symbol, Last string } `json:"tickers"`
	}
	if status, raw, err := m.do(ctx, http.MethodGet, "/api/v1/tickers?exchange="+exchange+"&type="+typ, nil, nil, &tk); err != nil || status != http.StatusOK {
		return mk, fmt.Errorf("tickers: status %d %v %.200s", status, err, raw)
	}
	for _, t := range tk.Tickers {
		if t.Symbol == symbol {
			mk.Last = t.Last
		}
	}
	for _, i := range inst.Instruments {
		if i.Symbol != symbol {
			continue
		}
		last, err := decimal.NewFromString(mk.Last)
		if err != nil || !last.IsPositive() {
			return mk, fmt.Errorf("%s: no last price", symbol)
		}
		tick, err1 := decimal.NewFromString(i.TickSize)
		step, err2 := decimal.NewFromString(i.StepSize)
		minQty, err3 := decimal.NewFromString(i.MinQty)
		if err1 != nil || err2 != nil || err3 != nil || !tick.IsPositive() || !step.IsPositive() {
			return mk, fmt.Errorf("%s: unreadable rules %+v", symbol, i)
		}
		minNotional := decimal.NewFromInt(5)
		if v, err := decimal.NewFromString(i.MinNotional); err == nil && v.IsPositive() {
			minNotional = v
		}
		price := last.Mul(decimal.RequireFromString("0.8")).Div(tick).Floor().Mul(tick)
		mk.RestPrice = price.String()
		mk.Qty = sizeFor(minNotional.Mul(decimal.NewFromInt(2)).Div(price), step, minQty).String()
		mstep, mmin := step, minQty
		if v, err := decimal.NewFromString(i.MarketStepSize); err == nil && v.IsPositive() {
			mstep = v
		}
		if v, err := decimal.NewFromString(i.MarketMinQty); err == nil && v.IsPositive() {
			mmin = v
		}
		mk.MarketQty = sizeFor(minNotional.Mul(decimal.NewFromInt(2)).Div(last), mstep, mmin).String()
		return mk, nil
	}
	return mk, fmt.Errorf("%s %s has no instrument %s", exchange, typ, symbol)
}

// sizeFor rounds want up to the step grid, at least min.
func sizeFor(want, step, minQty decimal.Decimal) decimal.Decimal {
	q := want.Div(step).Ceil().Mul(step)
	if q.LessThan(minQty) {
		q = minQty
	}
	return q
}

// StepResult is one load step's figures.
type StepResult struct {
	Journal    string  `json:"journal"`
	TargetRate float64 `json:"targetOrdersPerSec"`
	Seconds    float64 `json:"seconds"`
	Scheduled  int     `json:"scheduled"`
	Sent       int     `json:"sent"`
	// NotSent were due but not sent: the step's sending time (its duration and half again) ran out first.
	NotSent int `json:"notSent"`
	// Acked answered 201 (placed) or 202 (pending: the exchange's answer is not known yet).
	Acked        int            `json:"acknowledged"`
	Pending      int            `json:"pending"`
	AchievedRate float64        `json:"achievedOrdersPerSec"`
	Place        Summary        `json:"placeLatency"`
	Cancel       Summary        `json:"cancelLatency"`
	Errors       map[string]int `json:"errors"`
	CancelErrors map[string]int `json:"cancelErrors"`
	BFFCPUms     float64        `json:"bffCpuMs"`
	CPUmsOrder   float64        `json:"bffCpuMsPerOrder"`
	BFFCores     float64        `json:"bffCores"`
	Load1After   float64        `json:"loadAverage1mAfter"`
	// ProcessCPUms is the CPU time of each of the stack's processes during the step, by command name (with
	// --stack), and of this load tool ("bench-load").
	ProcessCPUms map[string]float64 `json:"processCpuMs,omitempty"`
	// MachineCores is the CPU the whole machine used during the step (all processes, from /proc/stat), in cores:
	// beside the stack's share it shows what else ran.
	MachineCores float64 `json:"machineCores,omitempty"`
}

type job struct {
	i   int
	due time.Time
}

// runStep places limit orders for the members in turn at rate per second for d (open loop: latency from each
// order's due time to its acknowledgement), each placed order cancelled by the same worker right after; workers
// bound the requests in flight. Sending stops at d * 1.5 even when behind; the step waits for what is in flight.
func runStep(ctx context.Context, members []*Member, mk market, rate float64, d time.Duration, workers int, bffPID, stackPID int) StepResult {
	n := int(rate * d.Seconds())
	res := StepResult{TargetRate: rate, Scheduled: n, Errors: map[string]int{}, CancelErrors: map[string]int{}}
	place, cancelRec := NewRecorder(n+1), NewRecorder(n+1)
	var mu sync.Mutex
	var acked, pending atomic.Int64
	var lastAck atomic.Int64
	jobs := make(chan job, workers)
	var wg sync.WaitGroup
	// In-flight requests are not cut off by the sending bound; they end with ctx or the client timeout.
	for range workers {
		wg.Add(1)
		go func() { // owned by runStep, which waits for it; ends when jobs is closed
			defer wg.Done()
			for j := range jobs {
				m := members[j.i%len(members)]
				status, o, code, _ := m.Place(ctx, mk.body("BUY", "LIMIT", mk.RestPrice))
				now := time.Now()
				switch {
				case status == http.StatusCreated || status == http.StatusAccepted:
					place.Add(now.Sub(j.due))
					acked.Add(1)
					lastAck.Store(now.UnixNano())
					if status == http.StatusAccepted {
						pending.Add(1)
						continue
					}
				default:
					if code == "" {
						code = fmt.Sprintf("status %d", status)
					}
					mu.Lock()
					res.Errors[code]++
					mu.Unlock()
					continue
				}
				cs := time.Now()
				cstatus, ccode, _ := m.Cancel(ctx, o.ID)
				if cstatus == http.StatusOK {
					cancelRec.Add(time.Since(cs))
				} else {
					if ccode == "" {
						ccode = fmt.Sprintf("status %d", cstatus)
					}
					mu.Lock()
					res.CancelErrors[ccode]++
					mu.Unlock()
				}
			}
		}()
	}
	cpu0, _ := cpuMs(bffPID)
	tree0, self0, mach0 := treeCPU(stackPID), selfCPU(), machineBusyMs()
	start := time.Now()
	sendCtx, stopSending := context.WithDeadline(ctx, start.Add(d*3/2))
	sched := Schedule{Start: start, Rate: rate, N: n}
	sent := sched.Run(sendCtx, sleepCtx, time.Now, func(i int, due time.Time) bool {
		select {
		case jobs <- job{i: i, due: due}:
			return true
		case <-sendCtx.Done():
			return false
		}
	})
	stopSending()
	close(jobs)
	wg.Wait()
	end := time.Now()
	cpu1, _ := cpuMs(bffPID)
	tree1, self1, mach1 := treeCPU(stackPID), selfCPU(), machineBusyMs()
	if mach0 > 0 && mach1 > mach0 {
		res.MachineCores = (mach1 - mach0) / 1000 / end.Sub(start).Seconds()
	}
	if stackPID > 0 {
		res.ProcessCPUms = map[string]float64{"bench-load": self1 - self0}
		for k, v := range tree1 {
			if d := v - tree0[k]; d > 0 {
				res.ProcessCPUms[k] = d
			}
		}
	}
	res.Sent, res.NotSent = sent, n-sent
	res.Acked, res.Pending = int(acked.Load()), int(pending.Load())
	res.Seconds = end.Sub(start).Seconds()
	if la := lastAck.Load(); la > 0 {
		// Orders acknowledged per second from the first due time to the last acknowledgement.
		res.AchievedRate = float64(res.Acked) / time.Unix(0, la).Sub(start).Seconds()
	}
	res.Place, res.Cancel = place.Summary(), cancelRec.Summary()
	if bffPID > 0 {
		res.BFFCPUms = cpu1 - cpu0
		res.BFFCores = res.BFFCPUms / 1000 / res.Seconds
		if acked := res.Acked; acked > 0 {
			// The cancels are part of each order's round trip here.
			res.CPUmsOrder = res.BFFCPUms / float64(acked)
		}
	}
	res.Load1After = loadAvg1()
	return res
}

// machineBusyMs is the CPU time all CPUs spent busy so far (the first line of /proc/stat: every field but idle and
// iowait), in milliseconds; 0 where it cannot be read.
func machineBusyMs() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:8] { // user nice system idle iowait irq softirq
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0
		}
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return float64(busy) * 1000 / clockTicks
}

// selfCPU is this process's CPU time so far in milliseconds.
func selfCPU() float64 {
	v, _ := cpuMs(os.Getpid())
	return v
}

// errorList is a map of counts as "code ×n" items, most first.
func errorList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	out := ""
	for i, x := range all {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s x%d", x.k, x.v)
	}
	return out
}
