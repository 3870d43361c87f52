package stream

import (
	"context"
	"sync"
)

// Broker connects the replicas of the gateway. It tracks which topics this replica's clients watch (Join, Leave),
// decides which replica leads each topic (tells the gateway through lead/unlead), and carries the leader's
// messages to every interested replica (deliver).
type Broker interface {
	// Run runs the broker until ctx ends.
	Run(ctx context.Context) error
	// Join registers this replica's interest in a topic; Leave withdraws it. Both return quickly.
	Join(topic string)
	Leave(topic string)
	// Publish sends messages of topics this replica leads, in order, to every interested replica.
	Publish(msgs []Message)

	bind(h brokerHandler)
	// stats: leases held (Valkey) and errors by operation.
	stats() (leases int, errs map[string]uint64)
}

// Message is one published topic message. State marks a message that replaces everything before it (a book,
// ticker or candle state): a broker may keep the last one for replicas that join later.
type Message struct {
	Topic   string
	Payload []byte
	State   bool
	// msg is the decoded payload, so the in-process broker skips decoding it again.
	msg *pubMsg
}

type brokerHandler struct {
	deliver func(topic string, payload []byte, initial bool) bool // false: the payload does not decode
	batch   func(msgs []Message)
	lead    func(topic string)
	unlead  func(topic string)
	wants   func(topic string) bool
}

// MemoryBroker is the in-process broker: this replica leads every topic its clients watch.
type MemoryBroker struct {
	h      brokerHandler
	mu     sync.Mutex
	counts map[string]int
}

// NewMemoryBroker returns the single-replica broker.
func NewMemoryBroker() *MemoryBroker { return &MemoryBroker{counts: map[string]int{}} }

func (m *MemoryBroker) bind(h brokerHandler) { m.h = h }

func (m *MemoryBroker) stats() (int, map[string]uint64) { return 0, map[string]uint64{} }

// Run waits for ctx.
func (m *MemoryBroker) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// Join leads the topic on first interest.
func (m *MemoryBroker) Join(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[topic]++
	if m.counts[topic] == 1 {
		m.h.lead(topic)
	}
}

// Leave drops the upstream when the last local client leaves.
func (m *MemoryBroker) Leave(topic string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.counts[topic] == 0 {
		return
	}
	m.counts[topic]--
	if m.counts[topic] == 0 {
		delete(m.counts, topic)
		m.h.unlead(topic)
	}
}

// Publish delivers to this replica's hub.
func (m *MemoryBroker) Publish(msgs []Message) {
	m.h.batch(msgs)
}
