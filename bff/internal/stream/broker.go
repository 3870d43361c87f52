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
	// Last reads the last state message kept for a topic (ok false when none is kept). A receiver that finds a
	// hole in a topic's messages re-reads it (the private account stream; see Message.StateOnly).
	Last(ctx context.Context, topic string) (payload []byte, ok bool, err error)

	bind(h brokerHandler)
	// stats: leases held (Valkey) and errors by operation.
	stats() (leases int, errs map[string]uint64)
}

// TopicHandler lets another component use a broker's interest, leases and delivery for its own topics (the
// private account stream, bff/internal/accountstream): Lead and Unlead say when this replica holds a topic's one
// upstream, Deliver hands it every published message of a topic this replica joined, in order (initial: the kept
// last state of a topic just joined; false return: the payload does not decode). A broker serves one handler: a
// gateway's, or one bound here, never both.
type TopicHandler struct {
	Deliver func(topic string, payload []byte, initial bool) bool
	Lead    func(topic string)
	Unlead  func(topic string)
}

// BindTopics binds b to h (before b runs). The MemoryBroker then keeps each topic's last state for Last.
func BindTopics(b Broker, h TopicHandler) {
	if m, ok := b.(*MemoryBroker); ok {
		m.keepLast = true
	}
	b.bind(brokerHandler{
		deliver: h.Deliver,
		batch: func(msgs []Message) {
			for _, m := range msgs {
				if !m.StateOnly {
					h.Deliver(m.Topic, m.Payload, false)
				}
			}
		},
		lead: h.Lead, unlead: h.Unlead,
		wants: func(string) bool { return true },
	})
}

// Message is one published topic message. State marks a message that replaces everything before it (a book,
// ticker or candle state): a broker may keep the last one for replicas that join later.
type Message struct {
	Topic   string
	Payload []byte
	State   bool
	// StateOnly keeps the payload as the topic's last state (with State) without publishing it: a leader that
	// publishes deltas keeps the state they lead to beside them. A broker stores a batch's messages in order, so a
	// state kept before the deltas of its batch is never older than any delta a receiver has seen.
	StateOnly bool
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
	// keepLast: keep each led topic's last state message (BindTopics).
	keepLast bool
	last     map[string][]byte
}

// NewMemoryBroker returns the single-replica broker.
func NewMemoryBroker() *MemoryBroker {
	return &MemoryBroker{counts: map[string]int{}, last: map[string][]byte{}}
}

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
		delete(m.last, topic)
		m.h.unlead(topic)
	}
}

// Publish delivers to this replica's hub (or bound handler).
func (m *MemoryBroker) Publish(msgs []Message) {
	if m.keepLast {
		m.mu.Lock()
		for _, msg := range msgs {
			if msg.State && m.counts[msg.Topic] > 0 {
				m.last[msg.Topic] = msg.Payload
			}
		}
		m.mu.Unlock()
	}
	m.h.batch(msgs)
}

// Last returns the topic's last state message (kept only for a handler bound with BindTopics).
func (m *MemoryBroker) Last(_ context.Context, topic string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.last[topic]
	return b, ok, nil
}
