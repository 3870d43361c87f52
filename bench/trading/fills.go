package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// FillResult is the fill-to-stream figure: from a fill's exchange time (the fill event's `time`, milliseconds) to
// the arrival of its `fill` message at a WebSocket client subscribed to the private `fills` channel through the
// edge.
type FillResult struct {
	Orders  int               `json:"marketableOrders"`
	Fills   int               `json:"fillsReceived"`
	Latency Summary           `json:"latency"`
	Errors  map[string]int    `json:"errors,omitempty"`
	Note    string            `json:"note,omitempty"`
	Gaps    int               `json:"sequenceGaps"`
	Status  map[string]string `json:"statusMessages,omitempty"`
}

type streamMsg struct {
	Type    string          `json:"type"`
	Channel string          `json:"channel"`
	Seq     int64           `json:"seq"`
	PrevSeq int64           `json:"prevSeq"`
	State   string          `json:"state"`
	Reason  string          `json:"reason"`
	Error   json.RawMessage `json:"error"`
	Fill    *struct {
		Time string `json:"time"`
	} `json:"fill"`
}

// fillToStream subscribes m to `fills` on exchange over the edge's WebSocket with its session cookie, sends n
// marketable orders (market orders, buy and sell in turn so the position stays small) at rate per second, and
// measures each fill message's delay after the fill's exchange time. Bounded: n orders, and timeout overall.
func fillToStream(ctx context.Context, m *Member, exchange string, mkt market, n int, rate float64, timeout time.Duration) (FillResult, error) {
	res := FillResult{Errors: map[string]int{}, Status: map[string]string{}}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(m.edge, "http") + "/api/v1/stream"
	hdr := http.Header{}
	hdr.Set("Cookie", m.Cookie())
	hdr.Set("Origin", m.edge)
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		return res, fmt.Errorf("dial %s: %w", wsURL, err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 22)
	sub, _ := json.Marshal(map[string]string{"op": "subscribe", "id": "f1", "channel": "fills", "exchange": exchange})
	if err := conn.Write(ctx, websocket.MessageText, sub); err != nil {
		return res, fmt.Errorf("subscribe: %w", err)
	}
	// Wait for the subscription's snapshot before sending anything.
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return res, fmt.Errorf("waiting for the fills snapshot: %w", err)
		}
		var msg streamMsg
		if json.Unmarshal(b, &msg) != nil {
			continue
		}
		if msg.Type == "error" {
			return res, fmt.Errorf("fills subscription refused: %s", msg.Error)
		}
		if msg.Type == "snapshot" && msg.Channel == "fills" {
			break
		}
	}

	rec := NewRecorder(100_000)
	readDone := make(chan error, 1)
	got := make(chan struct{}, 1)
	fills := 0
	go func() { // owned by fillToStream: ends when the connection closes (deferred CloseNow) or ctx ends
		var last int64
		for {
			_, b, err := conn.Read(ctx)
			arrived := time.Now()
			if err != nil {
				readDone <- err
				return
			}
			var msg streamMsg
			if json.Unmarshal(b, &msg) != nil {
				continue
			}
			switch msg.Type {
			case "fill":
				if last != 0 && msg.PrevSeq != last {
					res.Gaps++
				}
				last = msg.Seq
				if msg.Fill == nil {
					continue
				}
				t, err := strconv.ParseInt(msg.Fill.Time, 10, 64)
				if err != nil || t <= 0 {
					continue
				}
				rec.Add(arrived.Sub(time.UnixMilli(t)))
				fills++
				select {
				case got <- struct{}{}:
				default:
				}
			case "snapshot":
				last = msg.Seq
			case "status":
				res.Status[msg.State] = msg.Reason
			}
		}
	}()

	sched := Schedule{Start: time.Now(), Rate: rate, N: n}
	sent := sched.Run(ctx, sleepCtx, time.Now, func(i int, _ time.Time) bool {
		side := "BUY"
		if i%2 == 1 {
			side = "SELL"
		}
		body := mkt.body(side, "MARKET", "")
		status, _, code, _ := m.Place(ctx, body)
		if status != http.StatusCreated {
			if code == "" {
				code = fmt.Sprintf("status %d", status)
			}
			res.Errors[code]++
		}
		return true
	})
	res.Orders = sent
	// Wait until the fills stop coming (two quiet seconds after the last order) or the bound.
	readerEnded := false
wait:
	for {
		select {
		case <-got:
		case err := <-readDone:
			readerEnded = true
			if ctx.Err() == nil {
				res.Note = "the stream ended: " + err.Error()
			}
			break wait
		case <-time.After(2 * time.Second):
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	cancel()
	_ = conn.Close(websocket.StatusNormalClosure, "")
	if !readerEnded {
		select {
		case <-readDone:
		case <-time.After(5 * time.Second):
			// The reader still owns res; hand back nothing of it.
			return FillResult{}, errors.New("the stream reader did not stop")
		}
	}
	res.Fills = fills
	res.Latency = rec.Summary()
	return res, nil
}
