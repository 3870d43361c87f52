package okx

import (
	"fmt"
	"hash/crc32"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	exchangev1 "github.com/exhub/exhub/plugin-sdk/gen/exchange/v1"
)

// level keeps OKX's own strings: the checksum is computed over them as sent.
type level struct {
	px    decimal.Decimal
	pxRaw string
	szRaw string
}

// Book is a local OKX order book kept from a snapshot and updates. Bids are best (highest) first, asks best
// (lowest) first.
type Book struct {
	bids, asks []level
	seqID      int64
	hasSeq     bool
}

// ErrBookGap is a sequence gap: the update's prevSeqId is not the last seqId.
var ErrBookGap = fmt.Errorf("okx: book sequence gap")

// ErrChecksum is a checksum mismatch after applying a message.
var ErrChecksum = fmt.Errorf("okx: book checksum mismatch")

// Reset replaces the book with a snapshot.
func (b *Book) Reset(r rawBook) {
	b.bids, b.asks = nil, nil
	b.apply(r)
	b.hasSeq = r.SeqID != nil
	if r.SeqID != nil {
		b.seqID = *r.SeqID
	}
}

// Update applies an incremental message after checking its sequence. The book is unchanged when it fails.
func (b *Book) Update(r rawBook) error {
	if b.hasSeq && r.PrevSeqID != nil && *r.PrevSeqID != b.seqID {
		return fmt.Errorf("%w: prevSeqId %d, last seqId %d", ErrBookGap, *r.PrevSeqID, b.seqID)
	}
	b.apply(r)
	if r.SeqID != nil {
		b.seqID, b.hasSeq = *r.SeqID, true
	}
	return nil
}

// Verify compares OKX's checksum (when the message has one) with the local book's.
func (b *Book) Verify(r rawBook) error {
	if r.Checksum == nil {
		return nil
	}
	if got := b.Checksum(); int64(got) != *r.Checksum {
		return fmt.Errorf("%w: local %d, exchange %d", ErrChecksum, got, *r.Checksum)
	}
	return nil
}

func (b *Book) apply(r rawBook) {
	b.bids = applySide(b.bids, r.Bids, true)
	b.asks = applySide(b.asks, r.Asks, false)
}

func applySide(side []level, upd [][]string, desc bool) []level {
	for _, u := range upd {
		if len(u) < 2 {
			continue
		}
		px, ok, err := parseDec("price", u[0])
		if err != nil || !ok {
			continue
		}
		sz, _, err := parseDec("size", u[1])
		if err != nil {
			continue
		}
		i, found := slices.BinarySearchFunc(side, px, func(l level, p decimal.Decimal) int {
			if desc {
				return p.Cmp(l.px)
			}
			return l.px.Cmp(p)
		})
		switch {
		case sz.IsZero() && found:
			side = slices.Delete(side, i, i+1)
		case sz.IsZero():
		case found:
			side[i].szRaw, side[i].pxRaw = u[1], u[0]
		default:
			side = slices.Insert(side, i, level{px: px, pxRaw: u[0], szRaw: u[1]})
		}
	}
	return side
}

// Checksum is OKX's book checksum: CRC32 (IEEE) of "bid1px:bid1sz:ask1px:ask1sz:..." over the top 25 levels of
// each side, interleaved while both sides have levels, as a signed 32-bit integer.
func (b *Book) Checksum() int32 {
	var sb strings.Builder
	for i := range checksumLevels {
		if i < len(b.bids) {
			if sb.Len() > 0 {
				sb.WriteByte(':')
			}
			sb.WriteString(b.bids[i].pxRaw + ":" + b.bids[i].szRaw)
		}
		if i < len(b.asks) {
			if sb.Len() > 0 {
				sb.WriteByte(':')
			}
			sb.WriteString(b.asks[i].pxRaw + ":" + b.asks[i].szRaw)
		}
	}
	return int32(crc32.ChecksumIEEE([]byte(sb.String())))
}

// Levels returns up to depth levels per side in base units (depth <= 0: all).
func (b *Book) Levels(depth int, cs decimal.Decimal) (bids, asks []*exchangev1.PriceLevel) {
	conv := func(ls []level) []*exchangev1.PriceLevel {
		if depth > 0 && len(ls) > depth {
			ls = ls[:depth]
		}
		out := make([]*exchangev1.PriceLevel, len(ls))
		for i, l := range ls {
			sz, _, _ := parseDec("size", l.szRaw)
			out[i] = &exchangev1.PriceLevel{Price: canon(l.px), Qty: canon(sz.Mul(cs))}
		}
		return out
	}
	return conv(b.bids), conv(b.asks)
}
