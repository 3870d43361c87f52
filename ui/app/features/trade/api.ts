import { api, ApiError, type Exchange } from "~/api/client";
import type { components } from "~/api/schema";

export type Instrument = components["schemas"]["Instrument"];
export type Ticker = components["schemas"]["Ticker"];
export type Candle = components["schemas"]["Candle"];
export type Trade = components["schemas"]["Trade"];
export type MarketType = "SPOT" | "SWAP";
export type { Exchange };

function fail(what: string, response: Response, error: unknown): never {
  const detail = error && typeof error === "object" && "detail" in error ? String(error.detail) : response.statusText;
  throw new ApiError(response.status, `${what}: ${response.status} ${detail}`);
}

export async function fetchInstruments(exchange: string, type: MarketType): Promise<Instrument[]> {
  const { data, error, response } = await api().GET("/api/v1/instruments", { params: { query: { exchange, type } } });
  if (error !== undefined || data === undefined) fail("GET /api/v1/instruments", response, error);
  return data.instruments ?? [];
}

export async function fetchTickers(exchange: string, type: MarketType): Promise<Ticker[]> {
  const { data, error, response } = await api().GET("/api/v1/tickers", { params: { query: { exchange, type } } });
  if (error !== undefined || data === undefined) fail("GET /api/v1/tickers", response, error);
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
  const { data, error, response } = await api().GET("/api/v1/candles", { params: { query: q } });
  if (error !== undefined || data === undefined) fail("GET /api/v1/candles", response, error);
  return data.candles ?? [];
}

export async function fetchTrades(exchange: string, type: MarketType, symbol: string, limit: number): Promise<Trade[]> {
  const { data, error, response } = await api().GET("/api/v1/trades", {
    params: { query: { exchange, type, symbol, limit } },
  });
  if (error !== undefined || data === undefined) fail("GET /api/v1/trades", response, error);
  return data.trades ?? [];
}

// The default market of an exchange when the route names none: BTC against
// USDT (BTCUSDT, BTC-USDT, BTC-USDT-SWAP ...), else the first listed.
export function defaultSymbol(instruments: Instrument[]): string | null {
  const btc = instruments.find((i) => i.base === "BTC" && i.quote === "USDT");
  return btc?.symbol ?? instruments[0]?.symbol ?? null;
}
