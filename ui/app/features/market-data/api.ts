import type { Instrument, Ticker } from "~/api/client";
import { fetchInstrumentList, fetchThrough, fetchTickerList, queryOptionsFor, STALE_MS } from "~/api/queries";
import type { components } from "~/api/schema";
import type { Period } from "./data";

export type OpenInterestPoint = components["schemas"]["OpenInterestPoint"];
export type LongShortPoint = components["schemas"]["LongShortPoint"];
export type TakerVolumePoint = components["schemas"]["TakerVolumePoint"];
export type FundingPoint = components["schemas"]["FundingPoint"];
export type HistoryCandle = components["schemas"]["HistoryCandle"];
export type LongShortKind = "accounts" | "top_accounts" | "top_positions";
export type { Instrument, Ticker };

export type SeriesQuery = { exchange: string; symbol: string; period: Period; from: number; to: number };

// Analytics through the app's query cache (~/api/queries): the same view
// asked again within a minute is served from memory. The signal cancels a
// request nobody waits for any more.
const fresh = { staleTime: STALE_MS.analytics };

export async function fetchOpenInterest(q: SeriesQuery, signal?: AbortSignal): Promise<OpenInterestPoint[]> {
  const opts = queryOptionsFor("get", "/api/v1/analytics/open-interest", { params: { query: q } }, fresh);
  return (await fetchThrough(opts, signal)).points ?? [];
}

export async function fetchLongShort(q: SeriesQuery, kind: LongShortKind, signal?: AbortSignal): Promise<LongShortPoint[]> {
  const opts = queryOptionsFor("get", "/api/v1/analytics/long-short-ratio", { params: { query: { ...q, kind } } }, fresh);
  return (await fetchThrough(opts, signal)).points ?? [];
}

export async function fetchTakerVolume(q: SeriesQuery, signal?: AbortSignal): Promise<TakerVolumePoint[]> {
  const opts = queryOptionsFor("get", "/api/v1/analytics/taker-volume", { params: { query: { ...q, type: "SWAP" } } }, fresh);
  return (await fetchThrough(opts, signal)).points ?? [];
}

export async function fetchFunding(q: SeriesQuery, signal?: AbortSignal): Promise<FundingPoint[]> {
  const opts = queryOptionsFor("get", "/api/v1/analytics/funding-rate", { params: { query: q } }, fresh);
  return (await fetchThrough(opts, signal)).points ?? [];
}

// Candles of the same periods (the volume under open interest): the ones
// whose open time lies in [from, to).
export async function fetchPeriodCandles(q: SeriesQuery, signal?: AbortSignal): Promise<HistoryCandle[]> {
  const step = { "5m": 300_000, "15m": 900_000, "1h": 3_600_000, "4h": 14_400_000, "1d": 86_400_000 }[q.period];
  const limit = Math.min(5000, Math.ceil((q.to - q.from) / step));
  const query = { exchange: q.exchange, type: "SWAP" as const, symbol: q.symbol, interval: q.period, end: q.to - 1, limit };
  const opts = queryOptionsFor("get", "/api/v1/analytics/candles", { params: { query } }, fresh);
  return ((await fetchThrough(opts, signal)).candles ?? []).filter((c) => c.openTime >= q.from);
}

export { fetchInstrumentList, fetchTickerList };
