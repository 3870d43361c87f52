import { api, type Exchange } from "~/api/client";
import { unwrap } from "~/lib/errors";
import type { components } from "~/api/schema";

export type Instrument = components["schemas"]["Instrument"];
export type Ticker = components["schemas"]["Ticker"];
export type Candle = components["schemas"]["Candle"];
export type Trade = components["schemas"]["Trade"];
export type MarketType = "SPOT" | "SWAP";
export type { Exchange };

export async function fetchInstruments(exchange: string, type: MarketType): Promise<Instrument[]> {
  const data = unwrap("GET /api/v1/instruments", await api().GET("/api/v1/instruments", { params: { query: { exchange, type } } }));
  return data.instruments ?? [];
}

export async function fetchTickers(exchange: string, type: MarketType): Promise<Ticker[]> {
  const data = unwrap("GET /api/v1/tickers", await api().GET("/api/v1/tickers", { params: { query: { exchange, type } } }));
  return data.tickers ?? [];
}

export async function fetchCandles(q: {
  exchange: string;
  type: MarketType;
  symbol: string;
  interval: string;
  end?: number;
  limit: number;
}): Promise<Candle[]> {
  const data = unwrap("GET /api/v1/candles", await api().GET("/api/v1/candles", { params: { query: q } }));
  return data.candles ?? [];
}

export async function fetchTrades(exchange: string, type: MarketType, symbol: string, limit: number): Promise<Trade[]> {
  const data = unwrap("GET /api/v1/trades", await api().GET("/api/v1/trades", {
    params: { query: { exchange, type, symbol, limit } },
  }));
  return data.trades ?? [];
}

// The default market of an exchange when the route names none: BTC against
// USDT (BTCUSDT, BTC-USDT, BTC-USDT-SWAP ...), else the first listed.
export function defaultSymbol(instruments: Instrument[]): string | null {
  const btc = instruments.find((i) => i.base === "BTC" && i.quote === "USDT");
  return btc?.symbol ?? instruments[0]?.symbol ?? null;
}
