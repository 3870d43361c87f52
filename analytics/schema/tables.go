// Package schema holds the ClickHouse tables of exhub's market history and the versioned, idempotent migrations
// that create them. The same definitions produce the DDL for a single server (ReplacingMergeTree tables) and for a
// cluster (ReplicatedReplacingMergeTree "<name>_local" tables on every node plus a Distributed "<name>" table in
// front, all ON CLUSTER). Readers and writers always use "<database>.<name>", so the rest of the code does not know
// which mode it runs in.
package schema

// Column is one column of a table.
type Column struct {
	Name string
	Type string
	// Doc is the column's meaning and unit (docs/analytics.md repeats it).
	Doc string
}

// Table is one table definition.
type Table struct {
	Name string
	Doc  string
	// Columns in order. Every table ends with ingested_at, the ReplacingMergeTree version column: of several rows
	// with the same sorting key the one ingested last survives merges and FINAL.
	Columns []Column
	// OrderBy is the sorting key; it is also the deduplication key.
	OrderBy string
	// PartitionBy is the partition expression.
	PartitionBy string
	// ShardBy is the Distributed sharding expression in cluster mode: every row of one symbol lands on one shard,
	// so FINAL deduplicates correctly per shard.
	ShardBy string
}

// Decimal is the type of every price, size, rate and ratio: exact, 18 digits after the point. Multiplying two of
// them overflows Decimal128 silently; cast one side to Decimal(76, 18) first.
const Decimal = "Decimal(38, 18)"

// Time is the type of every timestamp: Unix milliseconds, UTC.
const Time = "DateTime64(3, 'UTC')"

var (
	colExchange   = Column{"exchange", "LowCardinality(String)", "Exchange slug, e.g. binance, okx."}
	colMarketType = Column{"market_type", "LowCardinality(String)", "SPOT, or SWAP for USDT-margined perpetuals."}
	colSymbol     = Column{"symbol", "LowCardinality(String)", "The exchange's own symbol, e.g. BTCUSDT or BTC-USDT-SWAP."}
	colPeriod     = Column{"period", "LowCardinality(String)", "Aggregation period of the exchange series: 5m, 15m, 30m, 1h, 2h, 4h, 6h, 12h or 1d."}
	colIngested   = Column{"ingested_at", Time, "When exhub stored the row (the deduplication version: the latest wins)."}
)

// Table names.
const (
	Candles1m      = "candles_1m"
	Trades         = "trades"
	FundingRates   = "funding_rates"
	MarkPrices     = "mark_prices"
	OpenInterest   = "open_interest"
	LongShortRatio = "long_short_ratio"
	TakerVolume    = "taker_volume"
	Tickers        = "tickers"
	// Candles1h is the hourly roll-up of candles_1m (Rollups).
	Candles1h = "candles_1h"
)

const shardBySymbol = "cityHash64(exchange, symbol)"

// Tables are the market history tables, in creation order.
var Tables = []Table{
	{
		Name: Candles1m,
		Doc:  "One-minute OHLCV candles. Intervals of whole hours are read from candles_1h, others rolled up at query time (see docs/analytics.md).",
		Columns: []Column{
			colExchange, colMarketType, colSymbol,
			{"open_time", Time, "Start of the minute (UTC)."},
			{"open", Decimal, "First trade price in the minute, quote currency per base unit."},
			{"high", Decimal, "Highest trade price, quote per base."},
			{"low", Decimal, "Lowest trade price, quote per base."},
			{"close", Decimal, "Last trade price, quote per base."},
			{"volume", Decimal, "Traded quantity in base units (contracts converted to base by the plugin)."},
			{"quote_volume", Decimal, "Traded value in quote units (USDT for USDT pairs)."},
			{"trades", "UInt64", "Number of trades in the minute (0 when the exchange does not say)."},
			{"closed", "Bool", "false while the minute is still forming (a later row replaces it)."},
			colIngested,
		},
		OrderBy:     "(exchange, market_type, symbol, open_time)",
		PartitionBy: "toYYYYMM(open_time)",
		ShardBy:     shardBySymbol,
	},
	{
		Name: Trades,
		Doc:  "Public trades (the tape), one row per exchange trade id.",
		Columns: []Column{
			colExchange, colMarketType, colSymbol,
			{"time", Time, "Trade time at the exchange."},
			{"trade_id", "String", "The exchange's trade id."},
			{"price", Decimal, "Price, quote per base."},
			{"qty", Decimal, "Quantity in base units."},
			{"quote_qty", Decimal, "price * qty in quote units."},
			{"side", "Enum8('unknown' = 0, 'buy' = 1, 'sell' = 2)", "Taker side: buy lifted an ask, sell hit a bid."},
			colIngested,
		},
		OrderBy:     "(exchange, market_type, symbol, time, trade_id)",
		PartitionBy: "toYYYYMMDD(time)",
		ShardBy:     shardBySymbol,
	},
	{
		Name: FundingRates,
		Doc:  "Settled funding rates of perpetual swaps, one row per settlement.",
		Columns: []Column{
			colExchange, colSymbol,
			{"funding_time", Time, "The settlement time the rate applies to."},
			{"rate", Decimal, "Funding rate as a fraction per funding interval (0.0001 = 0.01 %); longs pay shorts when positive."},
			{"mark_price", "Nullable(" + Decimal + ")", "Mark price at settlement, quote per base, when the exchange gives it."},
			colIngested,
		},
		OrderBy:     "(exchange, symbol, funding_time)",
		PartitionBy: "toYear(funding_time)",
		ShardBy:     shardBySymbol,
	},
	{
		Name: MarkPrices,
		Doc:  "Mark and index price samples of perpetual swaps from the live stream.",
		Columns: []Column{
			colExchange, colSymbol,
			{"time", Time, "Sample time at the exchange."},
			{"mark_price", Decimal, "Mark price, quote per base."},
			{"index_price", "Nullable(" + Decimal + ")", "Index (spot reference) price, quote per base."},
			{"funding_rate", "Nullable(" + Decimal + ")", "Predicted funding rate for the next settlement, fraction per interval."},
			{"next_funding_time", "Nullable(" + Time + ")", "Next settlement time."},
			colIngested,
		},
		OrderBy:     "(exchange, symbol, time)",
		PartitionBy: "toYYYYMM(time)",
		ShardBy:     shardBySymbol,
	},
	{
		Name: OpenInterest,
		Doc:  "Open interest of perpetual swaps, as the exchange aggregates it per period.",
		Columns: []Column{
			colExchange, colSymbol, colPeriod,
			{"time", Time, "Start of the period."},
			{"open_interest", Decimal, "Open interest in base units."},
			{"open_interest_value", Decimal, "Open interest in quote units (USDT)."},
			colIngested,
		},
		OrderBy:     "(exchange, symbol, period, time)",
		PartitionBy: "toYYYYMM(time)",
		ShardBy:     shardBySymbol,
	},
	{
		Name: LongShortRatio,
		Doc:  "Long/short ratios of perpetual swaps per period and kind.",
		Columns: []Column{
			colExchange, colSymbol,
			{"kind", "LowCardinality(String)", "accounts (all accounts by count), top_accounts (top traders by count) or top_positions (top traders by position size)."},
			colPeriod,
			{"time", Time, "Start of the period."},
			{"long_short_ratio", Decimal, "long_ratio / short_ratio."},
			{"long_ratio", Decimal, "Fraction long, in [0, 1]."},
			{"short_ratio", Decimal, "Fraction short, in [0, 1]; long_ratio + short_ratio = 1."},
			colIngested,
		},
		OrderBy:     "(exchange, symbol, kind, period, time)",
		PartitionBy: "toYYYYMM(time)",
		ShardBy:     shardBySymbol,
	},
	{
		Name: TakerVolume,
		Doc:  "Taker buy and sell volume per period.",
		Columns: []Column{
			colExchange, colMarketType, colSymbol, colPeriod,
			{"time", Time, "Start of the period."},
			{"buy_volume", Decimal, "Volume of taker buys (aggressive buyers) in base units."},
			{"sell_volume", Decimal, "Volume of taker sells in base units."},
			{"buy_sell_ratio", Decimal, "buy_volume / sell_volume."},
			colIngested,
		},
		OrderBy:     "(exchange, market_type, symbol, period, time)",
		PartitionBy: "toYYYYMM(time)",
		ShardBy:     shardBySymbol,
	},
	{
		Name: Tickers,
		Doc:  "24-hour ticker snapshots from the live stream.",
		Columns: []Column{
			colExchange, colMarketType, colSymbol,
			{"time", Time, "Snapshot time at the exchange."},
			{"last", Decimal, "Last trade price, quote per base."},
			{"open_24h", Decimal, "Reference open of the 24 h change, quote per base."},
			{"high_24h", Decimal, "24 h high, quote per base."},
			{"low_24h", Decimal, "24 h low, quote per base."},
			{"volume_24h", Decimal, "24 h volume in base units."},
			{"quote_volume_24h", Decimal, "24 h volume in quote units."},
			{"change_pct_24h", Decimal, "24 h change in percent (-2.15 = -2.15 %)."},
			{"bid", "Nullable(" + Decimal + ")", "Best bid price."},
			{"ask", "Nullable(" + Decimal + ")", "Best ask price."},
			{"mark_price", "Nullable(" + Decimal + ")", "SWAP: mark price."},
			{"index_price", "Nullable(" + Decimal + ")", "SWAP: index price."},
			{"funding_rate", "Nullable(" + Decimal + ")", "SWAP: predicted funding rate, fraction per interval."},
			{"open_interest", "Nullable(" + Decimal + ")", "SWAP: open interest in base units."},
			colIngested,
		},
		OrderBy:     "(exchange, market_type, symbol, time)",
		PartitionBy: "toYYYYMM(time)",
		ShardBy:     shardBySymbol,
	},
}

// Rollups are tables derived from the market history tables rather than written from exchange data: candles_1h
// holds every hour of candles_1m, recomputed from candles_1m FINAL (RollupCandles1h) whenever minutes of that hour
// are written, so re-ingested minutes replace their earlier copy in the hour instead of adding to it. Its version
// column is the time of the recomputation: the latest recomputation of an hour wins.
var Rollups = []Table{
	{
		Name: Candles1h,
		Doc:  "Hourly OHLCV candles rolled up from candles_1m (FINAL), recomputed whenever minutes of the hour are written.",
		Columns: []Column{
			colExchange, colMarketType, colSymbol,
			{"open_time", Time, "Start of the hour (UTC)."},
			{"open", Decimal, "Open of the hour's first stored minute, quote per base."},
			{"high", Decimal, "Highest high of the hour's minutes, quote per base."},
			{"low", Decimal, "Lowest low of the hour's minutes, quote per base."},
			{"close", Decimal, "Close of the hour's last stored minute, quote per base."},
			{"volume", Decimal, "Sum of the minutes' volumes in base units."},
			{"quote_volume", Decimal, "Sum of the minutes' quote volumes."},
			{"trades", "UInt64", "Sum of the minutes' trade counts."},
			{"minutes", "UInt64", "How many one-minute candles of the hour are stored (60 when none is missing)."},
			{"forming", "UInt64", "How many of them were stored still forming (closed = false)."},
			{"ingested_at", Time, "When exhub recomputed the hour (the deduplication version: the latest wins)."},
		},
		OrderBy:     "(exchange, market_type, symbol, open_time)",
		PartitionBy: "toYear(open_time)",
		ShardBy:     shardBySymbol,
	},
}

// RollupCandles1h is the statement that recomputes candles_1h from candles_1m FINAL for the minutes matching where
// (a condition on candles_1m's columns; empty: every stored minute). Only whole hours may be selected: the caller
// selects [start of the first hour, end of the last hour) of a symbol.
func RollupCandles1h(database, where string) string {
	if where != "" {
		where = "\nWHERE " + where
	}
	db := q(database)
	return "INSERT INTO " + db + "." + q(Candles1h) +
		" (exchange, market_type, symbol, open_time, open, high, low, close, volume, quote_volume, trades, minutes, forming, ingested_at)\n" +
		"SELECT exchange, market_type, symbol, fromUnixTimestamp64Milli(intDiv(toUnixTimestamp64Milli(open_time), 3600000) * 3600000, 'UTC') AS hour,\n" +
		"    argMin(open, open_time), max(high), min(low), argMax(close, open_time), sum(volume), sum(quote_volume), sum(trades),\n" +
		"    count(), countIf(NOT closed), now64(3, 'UTC')\n" +
		"FROM " + db + "." + q(Candles1m) + " FINAL" + where + "\nGROUP BY exchange, market_type, symbol, hour"
}

// Lookup returns the table named name.
func Lookup(name string) (Table, bool) {
	for _, t := range Tables {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}

// ColumnNames lists the table's column names in order.
func (t Table) ColumnNames() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}
