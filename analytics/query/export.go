package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/exhub/exhub/analytics/schema"
)

// Format is an export format.
type Format struct {
	Name        string // csv, jsonl, parquet
	ClickHouse  string // the ClickHouse output format
	ContentType string
	Ext         string
}

// Formats are the export formats.
var Formats = map[string]Format{
	"csv":     {"csv", "CSVWithNames", "text/csv; charset=utf-8", "csv"},
	"jsonl":   {"jsonl", "JSONEachRow", "application/x-ndjson", "jsonl"},
	"parquet": {"parquet", "Parquet", "application/vnd.apache.parquet", "parquet"},
}

// timeColumn is each table's time column.
func timeColumn(table string) string {
	switch table {
	case schema.Candles1m:
		return "open_time"
	case schema.FundingRates:
		return "funding_time"
	}
	return "time"
}

// Datasets are the exportable tables.
func Datasets() []string {
	out := make([]string, len(schema.Tables))
	for i, t := range schema.Tables {
		out[i] = t.Name
	}
	return out
}

// Exporter streams exports through ClickHouse's HTTP interface: ClickHouse formats the rows and the bytes are
// copied to the client as they come, so memory stays flat whatever the range.
type Exporter struct {
	// HTTPAddr is ClickHouse's HTTP interface, host:port.
	HTTPAddr string
	Database string
	User     string
	Client   *http.Client
}

// ExportRequest selects what to export.
type ExportRequest struct {
	Dataset  string
	Exchange string
	Symbol   string // empty: every symbol of the exchange
	From, To int64  // Unix ms; From inclusive, To exclusive
	Format   string
}

// SQL is the query an export runs (with {name:Type} parameters bound by ClickHouse).
func (e *Exporter) SQL(r ExportRequest) (string, error) {
	t, ok := schema.Lookup(r.Dataset)
	if !ok {
		return "", fmt.Errorf("unknown dataset %q", r.Dataset)
	}
	f, ok := Formats[r.Format]
	if !ok {
		return "", fmt.Errorf("unknown format %q", r.Format)
	}
	db := e.Database
	if db == "" {
		db = "exhub"
	}
	tc := timeColumn(t.Name)
	cols := make([]string, 0, len(t.Columns))
	for _, c := range t.Columns {
		cols = append(cols, "`"+c.Name+"`")
	}
	where := "exchange = {exchange:String} AND " + tc + " >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND " +
		tc + " < fromUnixTimestamp64Milli({to:Int64}, 'UTC')"
	if r.Symbol != "" {
		where += " AND symbol = {symbol:String}"
	}
	return fmt.Sprintf("SELECT %s FROM `%s`.`%s` FINAL WHERE %s ORDER BY %s FORMAT %s",
		strings.Join(cols, ", "), db, t.Name, where, strings.Trim(t.OrderBy, "()"), f.ClickHouse), nil
}

// Export writes the export to w. Nothing is written when the query fails to start.
func (e *Exporter) Export(ctx context.Context, w io.Writer, r ExportRequest) (int64, error) {
	body, err := e.Open(ctx, r)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	n, err := io.Copy(w, body)
	if err != nil {
		return n, fmt.Errorf("export: stream: %w", err)
	}
	return n, nil
}

// Open starts the export and returns the formatted bytes as a stream once ClickHouse has accepted the query.
func (e *Exporter) Open(ctx context.Context, r ExportRequest) (io.ReadCloser, error) {
	sql, err := e.SQL(r)
	if err != nil {
		return nil, err
	}
	v := url.Values{}
	v.Set("param_exchange", r.Exchange)
	v.Set("param_from", strconv.FormatInt(r.From, 10))
	v.Set("param_to", strconv.FormatInt(r.To, 10))
	if r.Symbol != "" {
		v.Set("param_symbol", r.Symbol)
	}
	v.Set("readonly", "1")
	v.Set("optimize_read_in_order", "1")
	v.Set("output_format_parquet_compression_method", "zstd")
	user := e.User
	if user == "" {
		user = "default"
	}
	v.Set("user", user)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+e.HTTPAddr+"/?"+v.Encode(), strings.NewReader(sql))
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	client := e.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("export: %w: %w", ErrUnavailable, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("export: clickhouse answered %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return resp.Body, nil
}

// ErrUnavailable marks ClickHouse not answering.
var ErrUnavailable = errors.New("clickhouse unavailable")
