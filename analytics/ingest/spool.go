package ingest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/exhub/exhub/analytics/schema"
)

// spool keeps batches that could not be written to ClickHouse as files, oldest first, bounded in bytes. One file
// is one batch: a JSON header line {"table","token","rows"} and one JSON array per row. Files are written to a
// temporary name, synced and renamed, so a crash never leaves a half batch under a real name.
type spool struct {
	dir      string
	maxBytes int64

	mu    sync.Mutex
	files []spoolFile // oldest first
	bytes int64
	seq   uint64
}

type spoolFile struct {
	name string
	size int64
	rows int
}

type spoolHeader struct {
	Table string `json:"table"`
	Token string `json:"token"`
	Rows  int    `json:"rows"`
}

var errSpoolFull = errors.New("analytics spool is full")

func openSpool(dir string, maxBytes int64) (*spool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s := &spool{dir: dir, maxBytes: maxBytes}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") { // a write that never finished: its batch is still upstream or lost with the process
			_ = os.Remove(filepath.Join(dir, name))
			continue
		}
		if !strings.HasSuffix(name, ".batch") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		h, err := readHeader(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, spoolFile{name: name, size: info.Size(), rows: h.Rows})
		s.bytes += info.Size()
		var n uint64
		if _, err := fmt.Sscanf(name, "%020d", &n); err == nil && n > s.seq {
			s.seq = n
		}
	}
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].name < s.files[j].name })
	return s, nil
}

func readHeader(path string) (spoolHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return spoolHeader{}, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	var h spoolHeader
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&h); err != nil {
		return spoolHeader{}, fmt.Errorf("spool: %s: bad header: %w", path, err)
	}
	return h, nil
}

// put writes one batch; errSpoolFull when it would exceed the bound.
func (s *spool) put(b *batch) error {
	s.mu.Lock()
	s.seq++
	name := fmt.Sprintf("%020d-%s.batch", s.seq, b.table)
	s.mu.Unlock()

	tmp := filepath.Join(s.dir, name+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	enc := json.NewEncoder(w)
	err = enc.Encode(spoolHeader{Table: b.table, Token: b.token, Rows: len(b.rows)})
	for _, r := range b.rows {
		if err != nil {
			break
		}
		err = enc.Encode(r)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	var size int64
	if err == nil {
		var info os.FileInfo
		if info, err = f.Stat(); err == nil {
			size = info.Size()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("spool: write batch: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes+size > s.maxBytes {
		_ = os.Remove(tmp)
		return errSpoolFull
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, name)); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("spool: %w", err)
	}
	s.files = append(s.files, spoolFile{name: name, size: size, rows: len(b.rows)})
	s.bytes += size
	return nil
}

// oldest returns the oldest batch, or nil.
func (s *spool) oldest() (*batch, string, error) {
	s.mu.Lock()
	if len(s.files) == 0 {
		s.mu.Unlock()
		return nil, "", nil
	}
	name := s.files[0].name
	s.mu.Unlock()
	b, err := readBatch(filepath.Join(s.dir, name))
	return b, name, err
}

// remove deletes the oldest batch after it was written.
func (s *spool) remove(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.files) == 0 || s.files[0].name != name {
		return fmt.Errorf("spool: %s is not the oldest batch", name)
	}
	if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	s.bytes -= s.files[0].size
	s.files = s.files[1:]
	return nil
}

func (s *spool) stats() (files, rows int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		rows += f.rows
	}
	return len(s.files), rows, s.bytes
}

func readBatch(path string) (*batch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<16))
	dec.UseNumber()
	var h spoolHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("spool: %s: header: %w", path, err)
	}
	t, ok := schema.Lookup(h.Table)
	if !ok {
		return nil, fmt.Errorf("spool: %s: unknown table %q", path, h.Table)
	}
	kinds := columnKinds(t)
	b := &batch{table: h.Table, token: h.Token, rows: make([][]any, 0, h.Rows)}
	for dec.More() {
		var raw []any
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("spool: %s: row %d: %w", path, len(b.rows), err)
		}
		row, err := typedRow(raw, kinds)
		if err != nil {
			return nil, fmt.Errorf("spool: %s: row %d: %w", path, len(b.rows), err)
		}
		b.rows = append(b.rows, row)
	}
	if len(b.rows) != h.Rows {
		return nil, fmt.Errorf("spool: %s: %d rows, header says %d", path, len(b.rows), h.Rows)
	}
	return b, nil
}

type kind uint8

const (
	kString kind = iota
	kTime
	kUint
	kBool
)

func columnKinds(t schema.Table) []kind {
	out := make([]kind, len(t.Columns))
	for i, c := range t.Columns {
		switch {
		case strings.Contains(c.Type, "DateTime64"):
			out[i] = kTime
		case strings.Contains(c.Type, "UInt64"):
			out[i] = kUint
		case strings.Contains(c.Type, "Bool"):
			out[i] = kBool
		default:
			out[i] = kString
		}
	}
	return out
}

// typedRow turns a decoded JSON row back into the Go types the writer appends.
func typedRow(raw []any, kinds []kind) ([]any, error) {
	if len(raw) != len(kinds) {
		return nil, fmt.Errorf("%d values, table has %d columns", len(raw), len(kinds))
	}
	out := make([]any, len(raw))
	for i, v := range raw {
		if v == nil {
			continue
		}
		switch kinds[i] {
		case kTime, kUint:
			n, ok := v.(json.Number)
			if !ok {
				return nil, fmt.Errorf("column %d: %T is not a number", i, v)
			}
			x, err := n.Int64()
			if err != nil {
				return nil, fmt.Errorf("column %d: %w", i, err)
			}
			if kinds[i] == kUint {
				out[i] = uint64(x)
			} else {
				out[i] = x
			}
		case kBool:
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("column %d: %T is not a bool", i, v)
			}
			out[i] = b
		default:
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("column %d: %T is not a string", i, v)
			}
			out[i] = s
		}
	}
	return out, nil
}

func (s *spool) empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.files) == 0
}
