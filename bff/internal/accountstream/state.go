package accountstream

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/shopspring/decimal"
	"google.golang.org/protobuf/proto"

	"github.com/exhub/exhub/bff/internal/accountstream/feed"
	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// model is an account's state as its events build it: open orders, positions, balances, waiting algo orders and
// the most recent fills. The leader keeps one to publish the state beside its events; every replica keeps one to
// give a new subscriber a snapshot at once. Not safe for concurrent use.
type model struct {
	orders    map[string]*exchangev1.Order
	positions map[string]*exchangev1.Position
	balances  map[string]*exchangev1.Balance
	algos     map[string]*exchangev1.AlgoOrder
	fills     []*exchangev1.Fill // oldest first, at most maxFills
	maxFills  int
	time      int64
	synced    bool           // a snapshot was applied
	snap      *feed.Snapshot // cached snapshot, nil after a change
}

func newModel(maxFills int) *model {
	m := &model{maxFills: maxFills}
	m.clear()
	return m
}

func (m *model) clear() {
	m.orders = map[string]*exchangev1.Order{}
	m.positions = map[string]*exchangev1.Position{}
	m.balances = map[string]*exchangev1.Balance{}
	m.algos = map[string]*exchangev1.AlgoOrder{}
	m.snap = nil
}

// reset replaces orders, positions, balances and algo orders with a snapshot's; recent fills stay (they are
// history, not state).
func (m *model) reset(s *exchangev1.AccountSnapshot, time int64) {
	m.clear()
	for _, o := range s.GetOpenOrders() {
		m.order(o)
	}
	for _, p := range s.GetPositions() {
		m.position(p)
	}
	for _, b := range s.GetBalances() {
		m.balances[balanceKey(b)] = b
	}
	for _, a := range s.GetAlgoOrders() {
		m.algo(a)
	}
	if time > m.time {
		m.time = time
	}
	m.synced = true
}

// apply applies one delta event (statuses change nothing).
func (m *model) apply(ev *exchangev1.AccountEvent) {
	switch e := ev.GetEvent().(type) {
	case *exchangev1.AccountEvent_Order:
		m.order(e.Order)
	case *exchangev1.AccountEvent_Fill:
		m.fills = append(m.fills, e.Fill)
		if over := len(m.fills) - m.maxFills; over > 0 {
			m.fills = append(m.fills[:0:0], m.fills[over:]...)
		}
	case *exchangev1.AccountEvent_Position:
		m.position(e.Position)
	case *exchangev1.AccountEvent_Balance:
		m.balances[balanceKey(e.Balance)] = e.Balance
	case *exchangev1.AccountEvent_AlgoOrder:
		m.algo(e.AlgoOrder)
	case *exchangev1.AccountEvent_Snapshot:
		m.reset(e.Snapshot, ev.GetTime())
		return
	default:
		return
	}
	if ev.GetTime() > m.time {
		m.time = ev.GetTime()
	}
	m.snap = nil
}

func (m *model) order(o *exchangev1.Order) {
	k := o.GetOrderId()
	if k == "" {
		k = "c:" + o.GetClientOrderId()
	}
	switch o.GetStatus() {
	case exchangev1.OrderStatus_ORDER_STATUS_FILLED, exchangev1.OrderStatus_ORDER_STATUS_CANCELLED,
		exchangev1.OrderStatus_ORDER_STATUS_REJECTED, exchangev1.OrderStatus_ORDER_STATUS_EXPIRED:
		delete(m.orders, k)
	default:
		m.orders[k] = o
	}
}

func (m *model) position(p *exchangev1.Position) {
	k := p.GetSymbol() + "|" + p.GetPositionSide().String()
	if q, err := decimal.NewFromString(p.GetQty()); err == nil && q.IsZero() {
		delete(m.positions, k)
		return
	}
	m.positions[k] = p
}

func (m *model) algo(a *exchangev1.AlgoOrder) {
	if a.GetStatus() == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_WAITING ||
		a.GetStatus() == exchangev1.AlgoOrderStatus_ALGO_ORDER_STATUS_UNSPECIFIED {
		m.algos[a.GetAlgoId()] = a
		return
	}
	delete(m.algos, a.GetAlgoId())
}

func balanceKey(b *exchangev1.Balance) string { return b.GetWallet().String() + "|" + b.GetAsset() }

// snapshot returns the state (cached until the next change): orders by creation time, the rest by key.
func (m *model) snapshot() *feed.Snapshot {
	if m.snap != nil {
		return m.snap
	}
	s := &feed.Snapshot{Time: m.time, Fills: slices.Clone(m.fills)}
	for _, k := range sortedKeys(m.orders) {
		s.Orders = append(s.Orders, m.orders[k])
	}
	slices.SortStableFunc(s.Orders, func(a, b *exchangev1.Order) int { return cmp.Compare(a.GetCreatedTime(), b.GetCreatedTime()) })
	for _, k := range sortedKeys(m.positions) {
		s.Positions = append(s.Positions, m.positions[k])
	}
	for _, k := range sortedKeys(m.balances) {
		s.Balances = append(s.Balances, m.balances[k])
	}
	for _, k := range sortedKeys(m.algos) {
		s.AlgoOrders = append(s.AlgoOrders, m.algos[k])
	}
	m.snap = s
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// wireState is a model on the wire between replicas: the snapshot and recent fills as exchange.v1 protobuf.
type wireState struct {
	Snap  []byte   `json:"snap"`
	Fills [][]byte `json:"fills,omitempty"`
	Time  int64    `json:"time,omitempty"`
}

func (m *model) wire() (*wireState, error) {
	s := m.snapshot()
	snap, err := proto.Marshal(&exchangev1.AccountSnapshot{OpenOrders: s.Orders, Positions: s.Positions,
		Balances: s.Balances, AlgoOrders: s.AlgoOrders})
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	w := &wireState{Snap: snap, Time: s.Time}
	for _, f := range s.Fills {
		b, err := proto.Marshal(f)
		if err != nil {
			return nil, fmt.Errorf("encode fill: %w", err)
		}
		w.Fills = append(w.Fills, b)
	}
	return w, nil
}

// load replaces the model with a wire state.
func (m *model) load(w *wireState) error {
	var snap exchangev1.AccountSnapshot
	if err := proto.Unmarshal(w.Snap, &snap); err != nil {
		return fmt.Errorf("decode snapshot: %w", err)
	}
	fills := make([]*exchangev1.Fill, 0, len(w.Fills))
	for _, b := range w.Fills {
		f := &exchangev1.Fill{}
		if err := proto.Unmarshal(b, f); err != nil {
			return fmt.Errorf("decode fill: %w", err)
		}
		fills = append(fills, f)
	}
	m.time = 0
	m.reset(&snap, w.Time)
	m.fills = fills
	if over := len(m.fills) - m.maxFills; over > 0 {
		m.fills = m.fills[over:]
	}
	m.snap = nil
	return nil
}
