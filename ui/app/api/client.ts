import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema";

export type Exchange = components["schemas"]["Exchange"];

// Requests give up after this long (the product's HTTP timeout).
export const REQUEST_TIMEOUT_MS = 30_000;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type FetchFn = (input: Request) => Promise<Response>;

let fetchOverride: FetchFn | undefined;
let client: Client<paths> | undefined;

// Replaces the transport (tests pass a fake); undefined restores the browser's fetch.
export function setApiFetch(f: FetchFn | undefined): void {
  fetchOverride = f;
  client = undefined;
}

function withTimeout(f: FetchFn): FetchFn {
  return (req) =>
    new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new ApiError(0, `request timed out after ${REQUEST_TIMEOUT_MS} ms`)),
        REQUEST_TIMEOUT_MS,
      );
      f(req).then(
        (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
}

export function api(): Client<paths> {
  client ??= createClient<paths>({
    // The API is same-origin: the edge forwards /api to the BFF.
    baseUrl: window.location.origin,
    fetch: withTimeout(fetchOverride ?? ((req) => globalThis.fetch(req))),
  });
  return client;
}

export async function fetchExchanges(): Promise<Exchange[]> {
  const { data, error, response } = await api().GET("/api/v1/exchanges");
  if (error !== undefined || data === undefined) {
    const detail = error && typeof error === "object" && "detail" in error ? String(error.detail) : response.statusText;
    throw new ApiError(response.status, `GET /api/v1/exchanges: ${response.status} ${detail}`);
  }
  return data.exchanges ?? [];
}

export type Mover = components["schemas"]["Mover"];
export type Instrument = components["schemas"]["Instrument"];
export type Ticker = components["schemas"]["Ticker"];
export type MarketType = "SPOT" | "SWAP";

function failed(what: string, response: Response, error: unknown): never {
  const detail = error && typeof error === "object" && "detail" in error ? String(error.detail) : response.statusText;
  throw new ApiError(response.status, `${what}: ${response.status} ${detail}`);
}

// The home page's biggest 24h movers (futures markets).
export async function fetchMovers(limit = 5): Promise<Mover[]> {
  const { data, error, response } = await api().GET("/api/v1/movers", { params: { query: { limit } } });
  if (error !== undefined || data === undefined) failed("GET /api/v1/movers", response, error);
  return data.movers ?? [];
}

export async function fetchInstrumentList(exchange: string, type: MarketType): Promise<Instrument[]> {
  const { data, error, response } = await api().GET("/api/v1/instruments", { params: { query: { exchange, type } } });
  if (error !== undefined || data === undefined) failed("GET /api/v1/instruments", response, error);
  return data.instruments ?? [];
}

export async function fetchTickerList(exchange: string, type: MarketType): Promise<Ticker[]> {
  const { data, error, response } = await api().GET("/api/v1/tickers", { params: { query: { exchange, type } } });
  if (error !== undefined || data === undefined) failed("GET /api/v1/tickers", response, error);
  return data.tickers ?? [];
}
