// Package sdktest is the reference exchange: an in-memory exchange that implements every exchange.v1 RPC.
//
// It exists for three reasons. Integrators read it first: it is a complete, small plugin that shows what each RPC
// is expected to return (canonical decimals, ascending candles aligned to their interval, sequenced book streams,
// typed errors). Hosts test against it: the exhub BFF runs it as the "reference" exchange in demo mode and in its
// tests. And the conformance kit is checked against it.
//
// The market is synthetic and deterministic from a seed. Each base asset (BTC, ETH, SOL) has an underlying price
// that follows a random walk; its spot and USDT-margined perpetual (SWAP) instruments quote around it. On start the
// history is generated backwards from the starting price, one bar per minute, so candles of every interval, trades
// and the derivatives series exist at once. A ticker goroutine owned by the Server then moves the market every
// tick: a new synthetic order book, a few synthetic taker trades, candles, mark prices, and algo order triggers.
//
// Accounts are paper accounts named by AccountRef.api_key (account_id when the key is empty). A new account gets a
// faucet deposit. Orders match against the synthetic book and against each other with price-time priority.
//
// Layout of the package, in reading order:
//
//	server.go       Server, Options, New, Close, Describe, Configure, Health
//	instruments.go  the instruments, their grids, decimal <-> integer grid conversion
//	market.go       the simulated market: history, the ticker loop, the order book, matching
//	marketdata.go   market data RPCs (instruments, tickers, order book, candles, trades)
//	analytics.go    funding rate, open interest, long/short ratio and taker volume series
//	stream.go       StreamMarket and StreamAccount with bounded, conflating per-stream queues
//	account.go      paper accounts, wallets, transfers, deposits, withdrawals, convert
//	trading.go      orders: placing, idempotency, amend, cancel, history
//	positions.go    algo orders, positions, leverage and modes
//	funding.go      funding settlements on SWAP positions every FundingInterval, ListFundingPayments
//	v11.go          revision 1.1: per-market capabilities, client ids, CheckCredentials, batches,
//	                cancel-all-after, GTD, unknown outcomes (Faults), the account snapshot
//	bufconn.go      serving a Server in-process for unit tests
package sdktest
