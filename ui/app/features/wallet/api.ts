import { queryOptions } from "@tanstack/react-query";
import { apiError, type Problem } from "~/lib/errors";
import { apiFetch } from "~/lib/session";

// The member's wallet API (/api/v1/wallet/*: bff/internal/api/wallet/README.md). Every call goes through apiFetch
// (same-origin cookie, X-CSRF-Token on writes); a failure is an ApiError carrying the problem document. Amounts stay
// decimal strings.

export type WalletName = "funding" | "trading";

export type CoinBalance = {
  coin: string;
  available: string;
  frozen: string;
  total: string;
  usdt_price: string;
  usdt_value: string;
};

export type WalletBalances = { wallet: WalletName; coins: CoinBalance[]; total_usdt: string };

export type ExchangeBalances = {
  exchange: string;
  status: "ok" | "no_account" | "error";
  error?: { code: string; detail: string };
  wallets: WalletBalances[];
  total_usdt: string;
  unpriced: string[];
};

export type Overview = { exchanges: ExchangeBalances[]; total_usdt: string; time: number };

export type Network = {
  network: string;
  name: string;
  deposit_enabled: boolean;
  withdraw_enabled: boolean;
  withdraw_fee: string;
  withdraw_min: string;
  withdraw_max: string;
  memo_required: boolean;
  confirmations: number;
  // The smallest withdrawal increment ("" when the exchange does not say); precision is its decimal places.
  withdraw_step: string;
  precision: number;
};

export type Asset = { coin: string; name: string; precision: number; networks: Network[] };

export type DepositAddress = { exchange: string; coin: string; network: string; address: string; memo?: string };

export type TransferStatus = "pending" | "success" | "failed" | "unknown";

export type Deposit = {
  id: string;
  coin: string;
  network: string;
  amount: string;
  address: string;
  memo?: string;
  tx_id?: string;
  status: TransferStatus;
  time: number;
};

export type Withdrawal = Deposit & { client_id?: string; fee: string };

export type Transfer = {
  id: string;
  client_id?: string;
  coin: string;
  amount: string;
  from: WalletName | "";
  to: WalletName | "";
  status: TransferStatus;
  time: number;
};

export type Convert = {
  id: string;
  quote_id?: string;
  from_coin: string;
  to_coin: string;
  from_amount: string;
  to_amount: string;
  price: string;
  status: TransferStatus;
  time: number;
};

export type HistoryPage<T> = { exchange: string; items: T[]; next_cursor?: string };

export type HistoryKind = "deposits" | "withdrawals" | "transfers" | "converts";

export type HistoryFilter = { exchange: string; coin?: string; start?: number; end?: number; limit?: number };

export type CoinKind = "OTHER" | "DEPOSIT" | "WITHDRAW" | "EXCHANGE" | "CONVERT";

export type WalletProblem = Problem & { field?: string; step_up?: string };

type Query = Record<string, string | number | undefined>;

function withQuery(path: string, q?: Query): string {
  if (!q) return path;
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== "" && v !== 0) p.set(k, String(v));
  const s = p.toString();
  return s ? `${path}?${s}` : path;
}

// One call: the status and the parsed body, or an ApiError.
export async function walletCall<T>(
  method: string,
  path: string,
  opts: { query?: Query; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<{ status: number; data: T }> {
  const headers: Record<string, string> = { Accept: "application/json", ...opts.headers };
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await apiFetch(withQuery(path, opts.query), {
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
  if (!res.ok) {
    const e = apiError(`${method} ${path}`, res, body);
    // The wallet's refusals name the request field at fault (problem extension "field").
    const field = body !== null && typeof body === "object" ? (body as { field?: unknown }).field : undefined;
    if (typeof field === "string" && field !== "") (e.problem as WalletProblem).field = field;
    // second_factor_stale names the page that asks for a code again (step-up.ts).
    const stepUp = body !== null && typeof body === "object" ? (body as { step_up?: unknown }).step_up : undefined;
    if (typeof stepUp === "string" && stepUp !== "") (e.problem as WalletProblem).step_up = stepUp;
    throw e;
  }
  return { status: res.status, data: body as T };
}

const get = async <T,>(path: string, query?: Query, signal?: AbortSignal) => (await walletCall<T>("GET", path, { query, signal })).data;

export const walletApi = {
  overview: (signal?: AbortSignal) => get<Overview>("/api/v1/wallet/overview", undefined, signal),
  assets: (exchange: string, signal?: AbortSignal) =>
    get<{ exchange: string; assets: Asset[]; withdraw_wallet?: WalletName }>("/api/v1/wallet/assets", { exchange }, signal),
  depositAddress: (exchange: string, coin: string, network: string, signal?: AbortSignal) =>
    get<DepositAddress>("/api/v1/wallet/deposit-address", { exchange, coin, network }, signal),
  depositExchange: (signal?: AbortSignal) => get<{ exchange: string }>("/api/v1/wallet/deposit-exchange", undefined, signal),
  setDepositExchange: async (exchange: string) =>
    (await walletCall<{ exchange: string }>("PUT", "/api/v1/wallet/deposit-exchange", { body: { exchange } })).data,
  history: <T,>(kind: HistoryKind, f: HistoryFilter, cursor?: string, signal?: AbortSignal) =>
    get<HistoryPage<T>>(`/api/v1/wallet/${kind}`, { ...f, cursor }, signal),
  coinHistory: async (kind: CoinKind, signal?: AbortSignal) =>
    (await get<{ kind: CoinKind; coins: string[] }>("/api/v1/wallet/coin-history", { kind }, signal)).coins,
  recordCoin: async (kind: CoinKind, coin: string) =>
    (await walletCall<{ kind: CoinKind; coins: string[] }>("POST", "/api/v1/wallet/coin-history", { body: { kind, coin } })).data
      .coins,
};

export const walletKeys = {
  all: ["wallet"] as const,
  overview: ["wallet", "overview"] as const,
  assets: (exchange: string) => ["wallet", "assets", exchange] as const,
  address: (exchange: string, coin: string, network: string) => ["wallet", "address", exchange, coin, network] as const,
  depositExchange: ["wallet", "deposit-exchange"] as const,
  history: (kind: HistoryKind, f: HistoryFilter) => ["wallet", "history", kind, f] as const,
  coins: (kind: CoinKind) => ["wallet", "coins", kind] as const,
};

export const walletQueries = {
  overview: () =>
    queryOptions({ queryKey: walletKeys.overview, queryFn: ({ signal }) => walletApi.overview(signal), staleTime: 10_000 }),
  assets: (exchange: string) =>
    queryOptions({
      queryKey: walletKeys.assets(exchange),
      queryFn: ({ signal }) => walletApi.assets(exchange, signal),
      staleTime: 5 * 60_000,
      enabled: exchange !== "",
    }),
  address: (exchange: string, coin: string, network: string) =>
    queryOptions({
      queryKey: walletKeys.address(exchange, coin, network),
      queryFn: ({ signal }) => walletApi.depositAddress(exchange, coin, network, signal),
      staleTime: 5 * 60_000,
      enabled: exchange !== "" && coin !== "" && network !== "",
    }),
  depositExchange: () =>
    queryOptions({ queryKey: walletKeys.depositExchange, queryFn: ({ signal }) => walletApi.depositExchange(signal) }),
  coins: (kind: CoinKind) =>
    queryOptions({ queryKey: walletKeys.coins(kind), queryFn: ({ signal }) => walletApi.coinHistory(kind, signal) }),
};
