package ingest

import (
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// The column-wise insert path (docs/decisions/0004-fast-ingest-path.md). clickhouse-go's generic Append parses
// every decimal string with shopspring/decimal, then rescales and copies it through math/big (several allocations
// per value); at hundreds of thousands of rows per second that dominates the writer's CPU. Instead a batch is
// filled column by column: Decimal(38, 18) columns get their int128 wire value from parseDecimal128 (exact, no
// allocation) appended straight to the column's ch-go buffer, every other column goes through the column's own
// AppendRow as before. A value that does not fit its column makes the batch a bad row, as on the generic path.
//
// clickhouse-go keeps a Decimal column's ch-go buffer in an unexported field; decimalBuffer reaches it and checks
// every assumption (field name, buffer type, scale), so a clickhouse-go upgrade that changes the layout makes the
// writer fall back to the generic path, which TestColumnPathIsUsed notices.

// decimalBuffer returns the ch-go buffer of a Decimal(38, 18) column, or nil.
func decimalBuffer(c column.Interface) *proto.ColDecimal128 {
	d, ok := c.(*column.Decimal)
	if !ok || d.Scale() != decScale || d.Precision() != decMaxDigits {
		return nil
	}
	f := reflect.ValueOf(d).Elem().FieldByName("col")
	if !f.IsValid() || f.Type() != reflect.TypeFor[proto.Column]() {
		return nil
	}
	buf, _ := (*(*proto.Column)(unsafe.Pointer(f.UnsafeAddr()))).(*proto.ColDecimal128)
	return buf
}

// fillColumns appends rows to a prepared batch column by column; fast reports false, having appended nothing,
// when a column's layout is not the expected one (the caller then appends row by row).
func fillColumns(pb driver.Batch, rows [][]any) (fast bool, err error) {
	cols := pb.Columns()
	decs := make([]*proto.ColDecimal128, len(cols))
	for i, c := range cols {
		if _, isDec := c.(*column.Decimal); isDec {
			if decs[i] = decimalBuffer(c); decs[i] == nil {
				return false, nil
			}
		}
	}
	for ri, r := range rows {
		if len(r) != len(cols) {
			return true, fmt.Errorf("row %d: %d values, table has %d columns", ri, len(r), len(cols))
		}
	}
	for ci, c := range cols {
		if buf := decs[ci]; buf != nil {
			*buf = slices.Grow(*buf, len(rows))
			for ri, r := range rows {
				s, ok := r[ci].(string)
				if !ok {
					return true, fmt.Errorf("row %d column %s: %T is not a decimal string", ri, c.Name(), r[ci])
				}
				lo, hi, ok := parseDecimal128(s)
				if !ok {
					return true, fmt.Errorf("row %d column %s: %q is not an exact Decimal(38, 18)", ri, c.Name(), s)
				}
				buf.Append(proto.Decimal128{Low: lo, High: hi})
			}
			continue
		}
		for ri, r := range rows {
			if err := c.AppendRow(r[ci]); err != nil {
				return true, fmt.Errorf("row %d column %s: %w", ri, c.Name(), err)
			}
		}
	}
	return true, nil
}
