import { infiniteQueryOptions, queryOptions } from "@tanstack/react-query";
import { strictApi } from "~/api/client";
import type { components } from "~/api/schema";

// The member's history (/api/v1/history/*, bff/internal/api/history/README.md):
// finished orders, fills and funding payments merged across exchanges newest
// first and paged by cursor, the sub-totals of a range and the realized PnL
// with equity. Money stays decimal strings.

export type HistoryOrder = components["schemas"]["HistoryOrder"];
export type HistoryFill = components["schemas"]["HistoryFill"];
export type HistoryFunding = components["schemas"]["HistoryFunding"];
export type SubTotals = components["schemas"]["HistorySubTotals"];
export type SubTotal = components["schemas"]["HistorySubTotal"];
export type Rpnl = components["schemas"]["HistoryRpnl"];
export type Failure = components["schemas"]["HistoryFailure"];

export type Market = "spot" | "futures";

// What the filters choose. from/to are Unix ms (0: unbounded).
export type Filters = {
  exchange?: string;
  symbol?: string;
  side?: "BUY" | "SELL";
  from: number;
  to: number;
};

export type Page<T> = { rows: T[]; next?: string; failed: Failure[] };

// The rows of one page asked for: enough to fill the screen and a scroll.
export const PAGE_SIZE = 100;

function query(f: Filters) {
  return {
    exchange: f.exchange || undefined,
    symbol: f.symbol?.trim() || undefined,
    side: f.side,
    from: f.from || undefined,
    to: f.to || undefined,
  };
}

async function ordersPage(market: Market, f: Filters, cursor?: string): Promise<Page<HistoryOrder>> {
  const { data } = await strictApi().GET("/api/v1/history/orders", {
    params: { query: { market, ...query(f), cursor, limit: PAGE_SIZE } },
  });
  return { rows: data!.orders, next: data!.next_cursor, failed: data!.failed };
}

async function fillsPage(market: Market, f: Filters, cursor?: string): Promise<Page<HistoryFill>> {
  const { data } = await strictApi().GET("/api/v1/history/fills", {
    params: { query: { market, ...query(f), cursor, limit: PAGE_SIZE } },
  });
  return { rows: data!.fills, next: data!.next_cursor, failed: data!.failed };
}

async function fundingPage(f: Filters, cursor?: string): Promise<Page<HistoryFunding>> {
  const q = query(f);
  const { data } = await strictApi().GET("/api/v1/history/funding", {
    params: { query: { exchange: q.exchange, symbol: q.symbol, from: q.from, to: q.to, cursor, limit: PAGE_SIZE } },
  });
  return { rows: data!.payments, next: data!.next_cursor, failed: data!.failed };
}

export type ListKind = "orders" | "fills" | "funding";

export function pageFetcher(kind: ListKind, market: Market, f: Filters) {
  return (cursor?: string): Promise<Page<unknown>> =>
    kind === "orders" ? ordersPage(market, f, cursor) : kind === "fills" ? fillsPage(market, f, cursor) : fundingPage(f, cursor);
}

export const historyQueries = {
  list: <T,>(kind: ListKind, market: Market, f: Filters) =>
    infiniteQueryOptions({
      queryKey: ["history", kind, market, f] as const,
      queryFn: ({ pageParam }) => pageFetcher(kind, market, f)(pageParam) as Promise<Page<T>>,
      initialPageParam: undefined as string | undefined,
      getNextPageParam: (last: Page<T>) => last.next,
      staleTime: 30_000,
    }),
  subtotal: (market: Market, f: Filters) =>
    queryOptions({
      queryKey: ["history", "subtotal", market, f] as const,
      queryFn: async () => {
        const { data } = await strictApi().GET("/api/v1/history/subtotal", { params: { query: { market, ...query(f) } } });
        return data!;
      },
      staleTime: 30_000,
    }),
  rpnl: (f: Filters) =>
    queryOptions({
      queryKey: ["history", "rpnl", f.exchange ?? "", f.from, f.to] as const,
      queryFn: async () => {
        const q = query(f);
        const { data } = await strictApi().GET("/api/v1/history/rpnl", {
          params: { query: { exchange: q.exchange, from: q.from, to: q.to } },
        });
        return data!;
      },
      staleTime: 30_000,
    }),
};

// The most pages an export reads (100 rows each).
export const EXPORT_MAX_PAGES = 100;
