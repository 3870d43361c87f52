import type { Exchange } from "~/api/client";
import { fetchInstrumentList, fetchThrough, fetchTickerList, queryOptionsFor, STALE_MS } from "~/api/queries";
import type { components } from "~/api/schema";

export type Instrument = components["schemas"]["Instrument"];
export type Ticker = components["schemas"]["Ticker"];
export type Candle = components["schemas"]["Candle"];
export type Trade = components["schemas"]["Trade"];
export type MarketType = "SPOT" | "SWAP";
export type { Exchange };

// Through the app's query cache (~/api/queries): instruments stay fresh for
// minutes and are shared with the other screens; tickers, candles and trades
// are fetched again on every call (only identical calls in flight share one
// request).
export function fetchInstruments(exchange: string, type: MarketType): Promise<Instrument[]> {
  return fetchInstrumentList(exchange, type);
}

export function fetchTickers(exchange: string, type: MarketType): Promise<Ticker[]> {
  return fetchTickerList(exchange, type);
}

export async function fetchCandles(q: {
  exchange: string;
  type: MarketType;
  symbol: string;
  interval: string;
  end?: number;
  limit: number;
}): Promise<Candle[]> {
  const opts = queryOptionsFor("get", "/api/v1/candles", { params: { query: q } }, { staleTime: STALE_MS.candles });
  return (await fetchThrough(opts)).candles ?? [];
}

export async function fetchTrades(exchange: string, type: MarketType, symbol: string, limit: number): Promise<Trade[]> {
  const opts = queryOptionsFor(
    "get",
    "/api/v1/trades",
    { params: { query: { exchange, type, symbol, limit } } },
    { staleTime: STALE_MS.trades },
  );
  return (await fetchThrough(opts)).trades ?? [];
}

// The default market of an exchange when the route names none: BTC against
// USDT (BTCUSDT, BTC-USDT, BTC-USDT-SWAP ...), else the first listed.
export function defaultSymbol(instruments: Instrument[]): string | null {
  const btc = instruments.find((i) => i.base === "BTC" && i.quote === "USDT");
  return btc?.symbol ?? instruments[0]?.symbol ?? null;
}
