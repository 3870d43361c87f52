import { queryOptions } from "@tanstack/react-query";
import { apiError } from "~/lib/errors";
import { apiFetch } from "~/lib/session";

// The signed-in member's exchange accounts and trading API (/api/v1/accounts,
// /api/v1/orders, ... : bff/internal/api/trade/README.md). Every call goes
// through apiFetch (same-origin cookie, X-CSRF-Token on writes); a failure is
// an ApiError carrying the problem document (its `code` is the typed reason:
// insufficient_funds, position_mode_mismatch, precision, min_size, ...).
// Prices and sizes stay decimal strings.

export type MarketType = "SPOT" | "SWAP";
export type Side = "BUY" | "SELL";
export type PositionSide = "LONG" | "SHORT" | "NET";
export type MarginMode = "CROSS" | "ISOLATED";
export type PositionModeValue = "ONE_WAY" | "HEDGE";
export type TimeInForce = "GTC" | "IOC" | "FOK" | "POST_ONLY";
export type TriggerPriceType = "LAST" | "MARK" | "INDEX";

export type ExchangeAccount = {
  id: string;
  exchange: string;
  mode: "broker" | "linked";
  name: string;
  key_last4?: string;
  status: "provisioning" | "active" | "failed";
  status_reason?: string;
};

export type AccountList = { accounts: ExchangeAccount[]; broker: boolean };

export type TpSl = { trigger_price: string; trigger_price_type?: TriggerPriceType; price?: string };

// An order as the API shows it (a journal entry, an order read from the exchange, or both).
export type Order = {
  id?: string;
  exchange: string;
  market_type: MarketType;
  symbol: string;
  kind?: "order" | "close" | "algo";
  side?: string;
  position_side?: string;
  type: string;
  time_in_force?: string;
  // pending (outcome being confirmed: never a failure), open, partially_filled, filled, cancelled, rejected,
  // expired, not_placed; algo orders: waiting, triggered, cancelled, failed.
  status: string;
  price?: string;
  // The exchange priced the order from its book (see PriceMatch).
  price_match?: PriceMatch;
  qty?: string;
  quote_qty?: string;
  filled_qty?: string;
  avg_price?: string;
  reduce_only?: boolean;
  trigger_price?: string;
  take_profit?: TpSl;
  stop_loss?: TpSl;
  client_order_id?: string;
  exchange_order_id?: string;
  reject_code?: string;
  reject_message?: string;
  created_at?: string;
  updated_at?: string;
};

export type Fill = {
  trade_id: string;
  order_id: string;
  symbol: string;
  market_type: string;
  side: string;
  position_side?: string;
  price: string;
  qty: string;
  quote_qty?: string;
  fee?: string;
  fee_asset?: string;
  realized_pnl?: string;
  maker: boolean;
  time: string;
};

export type Position = {
  symbol: string;
  position_side: PositionSide;
  // Base units; in one-way mode (NET) negative is short.
  qty: string;
  entry_price?: string;
  mark_price?: string;
  liquidation_price?: string;
  unrealized_pnl?: string;
  realized_pnl?: string;
  leverage?: string;
  margin_mode?: string;
  margin?: string;
  maintenance_margin?: string;
  notional?: string;
  // The price at which closing the whole position nets zero after the fees.
  break_even_price?: string;
  // Maintenance margin over margin balance as a fraction ("0.0315" is 3.15%);
  // liquidation at 1. Cross positions share the account's.
  margin_ratio?: string;
};

// A service (trading, withdraw, transfer) the operator gates on an exchange:
// what it requires (two_factor, kyc), what the member still lacks, and the
// refusal's code (two_factor_required or kyc_required) when refused.
export type ServiceGate = {
  service: "trading" | "withdraw" | "transfer";
  required: string[];
  missing: string[];
  code?: "two_factor_required" | "kyc_required";
};

export type Leverage = { leverage: string; max_leverage?: string; margin_mode?: MarginMode };
export type MaxOrderSize = { max_buy_qty: string; max_sell_qty: string };

// How the exchange prices an order from its book: QUEUE is the best price on
// the order's own side, OPPONENT the best opposite price (_5/_10/_20: that
// many levels deep).
export type PriceMatch = "QUEUE" | "QUEUE_5" | "QUEUE_10" | "QUEUE_20" | "OPPONENT" | "OPPONENT_5" | "OPPONENT_10" | "OPPONENT_20";

export type PlaceOrderBody = {
  exchange: string;
  market_type: MarketType;
  symbol: string;
  side: Side;
  type: "LIMIT" | "MARKET";
  time_in_force?: TimeInForce;
  price?: string;
  // LIMIT without price: the exchange prices the order from its own book
  // (only where the market's capabilities list price match).
  price_match?: PriceMatch;
  qty?: string;
  quote_qty?: string;
  reduce_only?: boolean;
  position_side?: PositionSide;
  margin_mode?: MarginMode;
  take_profit?: TpSl;
  stop_loss?: TpSl;
};

export type PlaceAlgoBody = {
  exchange: string;
  market_type: MarketType;
  symbol: string;
  side: Side;
  type: "STOP_MARKET" | "TAKE_PROFIT_MARKET" | "STOP_LIMIT" | "TAKE_PROFIT_LIMIT";
  trigger_price: string;
  trigger_price_type?: TriggerPriceType;
  price?: string;
  qty?: string;
  reduce_only?: boolean;
  close_position?: boolean;
  position_side?: PositionSide;
  margin_mode?: MarginMode;
};

// The answer to a write: 201 placed, 200 the same key's earlier answer, 202
// pending (the exchange's answer was lost: GET the order until it is known).
export type Placed = { httpStatus: number; order: Order };

export type Cancelled<T> = { pending: boolean; data: T };

export type Scope = { exchange: string; market_type: MarketType; symbol?: string };

type Query = Record<string, string | number | boolean | undefined>;

function withQuery(path: string, q?: Query): string {
  if (!q) return path;
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "") p.set(k, String(v));
  const s = p.toString();
  return s ? `${path}?${s}` : path;
}

async function call<T>(
  method: string,
  path: string,
  opts: { query?: Query; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<{ status: number; data: T }> {
  const headers: Record<string, string> = { Accept: "application/json", ...opts.headers };
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const url = withQuery(path, opts.query);
  const res = await apiFetch(url, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: opts.signal,
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  if (!res.ok) throw apiError(`${method} ${path}`, res, body);
  return { status: res.status, data: body as T };
}

// A fresh Idempotency-Key: made once per submit attempt, so a double click
// or a retried request reuses it and places one order.
export function newIdempotencyKey(): string {
  if (typeof crypto !== "undefined" && typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export const tradingApi = {
  accounts: async (signal?: AbortSignal) => (await call<AccountList>("GET", "/api/v1/accounts", { signal })).data,

  placeOrder: async (body: PlaceOrderBody, key: string): Promise<Placed> => {
    const r = await call<Order>("POST", "/api/v1/orders", { body, headers: { "Idempotency-Key": key } });
    return { httpStatus: r.status, order: r.data };
  },
  placeAlgo: async (body: PlaceAlgoBody, key: string): Promise<Placed> => {
    const r = await call<Order>("POST", "/api/v1/algo-orders", { body, headers: { "Idempotency-Key": key } });
    return { httpStatus: r.status, order: r.data };
  },
  order: async (id: string, signal?: AbortSignal) =>
    (await call<Order>("GET", `/api/v1/orders/${encodeURIComponent(id)}`, { signal })).data,
  amend: async (id: string, change: { price?: string; qty?: string }, key?: string): Promise<Placed> => {
    const r = await call<Order>("PATCH", `/api/v1/orders/${encodeURIComponent(id)}`, {
      body: change,
      headers: key ? { "Idempotency-Key": key } : undefined,
    });
    return { httpStatus: r.status, order: r.data };
  },
  // Cancels answer 202 when the exchange's answer was lost: the cancellation
  // may or may not have happened (pending), never a failure.
  cancel: async (id: string): Promise<Cancelled<Order>> => {
    const r = await call<Order>("DELETE", `/api/v1/orders/${encodeURIComponent(id)}`);
    return { pending: r.status === 202, data: r.data };
  },
  cancelAlgo: async (id: string): Promise<Cancelled<Order>> => {
    const r = await call<Order>("DELETE", `/api/v1/algo-orders/${encodeURIComponent(id)}`);
    return { pending: r.status === 202, data: r.data };
  },
  // 200: the orders cancelled; 202: the orders read back as still open.
  cancelAll: async (s: Scope): Promise<Cancelled<{ orders: Order[] | null }>> => {
    const r = await call<{ orders: Order[] | null }>("DELETE", "/api/v1/orders", { query: s });
    return { pending: r.status === 202, data: r.data };
  },
  orders: async (s: Scope, status: "open" | "history", signal?: AbortSignal) =>
    (await call<{ orders: Order[] | null; next_cursor?: string }>("GET", "/api/v1/orders", { query: { ...s, status }, signal }))
      .data,
  algoOrders: async (s: Scope, signal?: AbortSignal) =>
    (await call<{ orders: Order[] | null }>("GET", "/api/v1/algo-orders", { query: s, signal })).data,
  fills: async (s: Scope, signal?: AbortSignal) =>
    (await call<{ fills: Fill[] | null; next_cursor?: string }>("GET", "/api/v1/fills", { query: s, signal })).data,
  positions: async (exchange: string, symbol?: string, signal?: AbortSignal) =>
    (await call<{ positions: Position[] | null }>("GET", "/api/v1/positions", { query: { exchange, symbol }, signal })).data,
  closePosition: async (
    body: { exchange: string; symbol: string; position_side: PositionSide; margin_mode?: MarginMode },
    key: string,
  ): Promise<Placed> => {
    const r = await call<Order>("POST", "/api/v1/positions/close", { body, headers: { "Idempotency-Key": key } });
    return { httpStatus: r.status, order: r.data };
  },
  leverage: async (exchange: string, symbol: string, signal?: AbortSignal) =>
    (await call<Leverage>("GET", "/api/v1/leverage", { query: { exchange, symbol }, signal })).data,
  setLeverage: async (body: { exchange: string; symbol: string; leverage: string; margin_mode?: MarginMode }) =>
    (await call<Leverage>("PUT", "/api/v1/leverage", { body })).data,
  setMarginMode: async (body: { exchange: string; symbol: string; margin_mode: MarginMode }) =>
    (await call<unknown>("PUT", "/api/v1/margin-mode", { body })).data,
  positionMode: async (exchange: string, signal?: AbortSignal) =>
    (await call<{ mode: PositionModeValue }>("GET", "/api/v1/position-mode", { query: { exchange }, signal })).data,
  setPositionMode: async (exchange: string, mode: PositionModeValue) =>
    (await call<{ mode: PositionModeValue }>("PUT", "/api/v1/position-mode", { body: { exchange, mode } })).data,
  maxOrderSize: async (
    q: Scope & { symbol: string; price?: string; position_side?: PositionSide; margin_mode?: MarginMode },
    signal?: AbortSignal,
  ) => (await call<MaxOrderSize>("GET", "/api/v1/max-order-size", { query: q, signal })).data,
  serviceGates: async (exchange: string, signal?: AbortSignal) =>
    (await call<{ exchange: string; services: ServiceGate[] | null }>("GET", "/api/v1/service-gates", { query: { exchange }, signal })).data
      .services ?? [],
};

// Query keys: everything of the trading side starts with "trading", so one
// invalidation re-reads it all (after a stream resync).
export const TRADING_KEY = ["trading"] as const;

// How often open orders and positions are read again while the private
// stream is not carrying them (the spec's trading poll).
export const TRADING_POLL_MS = 12_000;

export const tradingQueries = {
  accounts: () =>
    queryOptions({ queryKey: [...TRADING_KEY, "accounts"], queryFn: ({ signal }) => tradingApi.accounts(signal), staleTime: 5_000 }),
  leverage: (exchange: string, symbol: string) =>
    queryOptions({
      queryKey: [...TRADING_KEY, "leverage", exchange, symbol],
      queryFn: ({ signal }) => tradingApi.leverage(exchange, symbol, signal),
      staleTime: 30_000,
    }),
  positionMode: (exchange: string) =>
    queryOptions({
      queryKey: [...TRADING_KEY, "position-mode", exchange],
      queryFn: ({ signal }) => tradingApi.positionMode(exchange, signal),
      staleTime: 30_000,
    }),
  maxOrderSize: (q: Scope & { symbol: string; price?: string; position_side?: PositionSide; margin_mode?: MarginMode }) =>
    queryOptions({
      queryKey: [...TRADING_KEY, "max-order-size", q],
      queryFn: ({ signal }) => tradingApi.maxOrderSize(q, signal),
      staleTime: 5_000,
    }),
  openOrders: (s: Scope) =>
    queryOptions({
      queryKey: [...TRADING_KEY, "orders", "open", s],
      queryFn: async ({ signal }) => (await tradingApi.orders(s, "open", signal)).orders ?? [],
      staleTime: 0,
    }),
  algoOrders: (s: Scope) =>
    queryOptions({
      queryKey: [...TRADING_KEY, "algo-orders", s],
      queryFn: async ({ signal }) => (await tradingApi.algoOrders(s, signal)).orders ?? [],
      staleTime: 0,
    }),
  orderHistory: (s: Scope) =>
    queryOptions({
      queryKey: [...TRADING_KEY, "orders", "history", s],
      queryFn: async ({ signal }) => (await tradingApi.orders(s, "history", signal)).orders ?? [],
      staleTime: 0,
    }),
  fills: (s: Scope) =>
    queryOptions({
      queryKey: [...TRADING_KEY, "fills", s],
      queryFn: async ({ signal }) => (await tradingApi.fills(s, signal)).fills ?? [],
      staleTime: 0,
    }),
  serviceGates: (exchange: string) =>
    queryOptions({
      queryKey: [...TRADING_KEY, "service-gates", exchange],
      queryFn: ({ signal }) => tradingApi.serviceGates(exchange, signal),
      staleTime: 30_000,
    }),
  positions: (exchange: string, symbol?: string) =>
    queryOptions({
      queryKey: [...TRADING_KEY, "positions", exchange, symbol ?? ""],
      queryFn: async ({ signal }) => (await tradingApi.positions(exchange, symbol, signal)).positions ?? [],
      staleTime: 0,
    }),
};
