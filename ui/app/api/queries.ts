import { QueryClient, type QueryKey } from "@tanstack/react-query";
import { isClientError } from "~/lib/errors";
import type { Client } from "openapi-fetch";
import type { OpenapiQueryClient } from "openapi-react-query";
import { strictApi, type Exchange, type Instrument, type MarketType, type Mover, type Ticker } from "./client";
import type { components, paths } from "./schema";

// The app's one data layer for request/response calls: TanStack Query over
// the typed $api (openapi-react-query). Streams (WebSocket) stay outside.
//
// Keys are [method, path, init] as $api builds them, so
//   invalidatePath("/api/v1/tickers")          every tickers query
//   queryClient.invalidateQueries(...)         anything finer
//
// Visibility (spec): a query with refetchInterval polls only while the page
// is visible (refetchIntervalInBackground stays false) and refetches when the
// page becomes visible again if its data went stale.

// How long a response counts as fresh, per kind of data.
export const STALE_MS = {
  exchanges: 60_000,
  instruments: 5 * 60_000,
  tickers: 0,
  movers: 10_000,
  candles: 10_000,
  trades: 0,
  analytics: 60_000,
} as const;

// Retries: never for a 4xx (the request itself is wrong), twice for the
// rest (network, timeout, 5xx).
export function retryRule(failureCount: number, error: unknown): boolean {
  return !isClientError(error) && failureCount < 2;
}

export function retryDelay(attempt: number): number {
  return Math.min(1000 * 2 ** attempt, 8000);
}

export function createAppQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 10_000,
        gcTime: 5 * 60_000,
        retry: retryRule,
        retryDelay,
        refetchOnWindowFocus: true,
        refetchIntervalInBackground: false,
      },
      mutations: { retry: false },
    },
  });
}

export const queryClient = createAppQueryClient();

type GetPath = { [P in keyof paths]: paths[P] extends { get: unknown } ? P : never }[keyof paths];

// Marks every query of a path stale (and refetches the ones on screen).
export function invalidatePath(path: GetPath, client: QueryClient = queryClient): Promise<void> {
  return client.invalidateQueries({ queryKey: ["get", path] satisfies QueryKey });
}

// After something that changes an exchange's markets (a plugin restart).
export async function invalidateMarkets(client: QueryClient = queryClient): Promise<void> {
  await Promise.all(
    (["/api/v1/exchanges", "/api/v1/instruments", "/api/v1/tickers", "/api/v1/movers"] as const).map((p) =>
      invalidatePath(p, client),
    ),
  );
}

// Typed query options for GET calls, with the keys and data of
// $api.queryOptions (~/api/hooks) but without loading the hook kit:
//   queryOptionsFor("get", "/api/v1/tickers", { params: { query } }, { staleTime })
export const queryOptionsFor = ((method: "get", path: string, init?: object, options?: object) => ({
  queryKey: init === undefined ? [method, path] : [method, path, init],
  queryFn: async ({ signal }: { signal: AbortSignal }) => {
    const get = strictApi().GET as (p: string, i: object) => ReturnType<Client<paths>["GET"]>;
    const { data, response } = await get(path, { ...init, signal });
    return response.status === 204 ? (data ?? null) : data;
  },
  ...options,
})) as unknown as OpenapiQueryClient<paths>["queryOptions"];

const $q = queryOptionsFor;

// Query options for the market data the screens share.
export const marketQueries = {
  exchanges: () => $q("get", "/api/v1/exchanges", {}, { staleTime: STALE_MS.exchanges }),
  movers: (limit: number) =>
    $q("get", "/api/v1/movers", { params: { query: { limit } } }, { staleTime: STALE_MS.movers }),
  instruments: (exchange: string, type: MarketType) =>
    $q(
      "get",
      "/api/v1/instruments",
      { params: { query: { exchange, type } } },
      { staleTime: STALE_MS.instruments },
    ),
  tickers: (exchange: string, type: MarketType) =>
    $q("get", "/api/v1/tickers", { params: { query: { exchange, type } } }, { staleTime: STALE_MS.tickers }),
};

// Imperative reads through the same cache, for loaders and pages that
// keep their own state (and their own Retry button: no automatic retry).
// An AbortSignal cancels the request when nobody else waits for it.
export async function fetchThrough<O extends { queryKey: QueryKey; queryFn?: unknown }>(
  options: O,
  signal?: AbortSignal,
): Promise<DataOf<O>> {
  const opts = { ...options, retry: false } as unknown as Parameters<QueryClient["fetchQuery"]>[0];
  if (!signal) return (await queryClient.fetchQuery(opts)) as DataOf<O>;
  if (signal.aborted) throw signal.reason;
  const onAbort = () => void queryClient.cancelQueries({ queryKey: options.queryKey, exact: true });
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    return (await queryClient.fetchQuery(opts)) as DataOf<O>;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

// The data type of query options built by $api.queryOptions.
type DataOf<O> = O extends { queryFn?: infer F } ? (F extends (...args: never[]) => infer R ? Awaited<R> : never) : never;

export async function fetchExchanges(): Promise<Exchange[]> {
  return (await fetchThrough(marketQueries.exchanges())).exchanges ?? [];
}

// The home page's biggest 24h movers (futures markets).
export async function fetchMovers(limit = 5): Promise<Mover[]> {
  return (await fetchThrough(marketQueries.movers(limit))).movers ?? [];
}

export async function fetchInstrumentList(exchange: string, type: MarketType): Promise<Instrument[]> {
  return (await fetchThrough(marketQueries.instruments(exchange, type))).instruments ?? [];
}

export async function fetchTickerList(exchange: string, type: MarketType): Promise<Ticker[]> {
  return (await fetchThrough(marketQueries.tickers(exchange, type))).tickers ?? [];
}

export type { components };
