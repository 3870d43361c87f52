package harness

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"
)

// WSClient is a minimal WebSocket client for the load tool: it reads server frames from a buffered reader (several
// frames that arrived together cost one read) and reuses its buffers, so thousands of clients fit beside the
// server on a small machine. It supports what the gateway sends: text frames (possibly fragmented), ping (answered
// with pong) and close.
type WSClient struct {
	c   net.Conn
	r   *bufio.Reader
	buf []byte
	out []byte
}

func DialWS(rawURL string, timeout time.Duration) (*WSClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("tcp", u.Host, timeout)
	if err != nil {
		return nil, err
	}
	var key [16]byte
	_, _ = rand.Read(key[:])
	_ = c.SetDeadline(time.Now().Add(timeout))
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key[:]))
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, err
	}
	r := bufio.NewReaderSize(c, 16<<10)
	status, err := r.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, err
	}
	if len(status) < 12 || status[9:12] != "101" {
		c.Close()
		return nil, fmt.Errorf("upgrade refused: %q", status)
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, err
		}
		if line == "\r\n" {
			break
		}
	}
	_ = c.SetDeadline(time.Time{})
	return &WSClient{c: c, r: r}, nil
}

// WriteText sends one masked text frame.
func (w *WSClient) WriteText(p []byte) error { return w.writeFrame(0x1, p) }

func (w *WSClient) writeFrame(op byte, p []byte) error {
	b := w.out[:0]
	b = append(b, 0x80|op)
	switch n := len(p); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	b = append(b, mask[:]...)
	for i, c := range p {
		b = append(b, c^mask[i%4])
	}
	w.out = b
	_, err := w.c.Write(b)
	return err
}

var errClosed = errors.New("closed by server")

// Read returns the next text message; the slice is valid until the next call.
func (w *WSClient) Read() ([]byte, error) {
	w.buf = w.buf[:0]
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.r, h[:]); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var e [2]byte
			if _, err := io.ReadFull(w.r, e[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(e[:]))
		case 127:
			var e [8]byte
			if _, err := io.ReadFull(w.r, e[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(e[:])
		}
		if n > 16<<20 {
			return nil, fmt.Errorf("frame of %d bytes", n)
		}
		start := len(w.buf)
		w.buf = append(w.buf, make([]byte, n)...)
		if _, err := io.ReadFull(w.r, w.buf[start:]); err != nil {
			return nil, err
		}
		switch op {
		case 0x8:
			return nil, errClosed
		case 0x9: // ping: answer with the same payload
			payload := append([]byte(nil), w.buf[start:]...)
			w.buf = w.buf[:start]
			if err := w.writeFrame(0xA, payload); err != nil {
				return nil, err
			}
			continue
		case 0xA:
			w.buf = w.buf[:start]
			continue
		}
		if fin {
			return w.buf, nil
		}
	}
}

// Close drops the connection.
func (w *WSClient) Close() { _ = w.c.Close() }

// Messages calls f for each message of a frame: the frame itself, or each element of a batched array.
func Messages(frame []byte, f func([]byte)) {
	if len(frame) == 0 || frame[0] != '[' {
		f(frame)
		return
	}
	marker := []byte(`{"type":"`)
	rest := frame[1:]
	for {
		i := bytes.Index(rest, marker)
		if i < 0 {
			return
		}
		rest = rest[i:]
		j := bytes.Index(rest[1:], marker)
		if j < 0 {
			f(rest)
			return
		}
		f(rest[:j+1])
		rest = rest[j+1:]
	}
}
