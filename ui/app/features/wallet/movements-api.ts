import { newIdempotencyKey } from "~/api/trading";
import { walletCall, type WalletName } from "./api";

// The wallet's money movements (POST /api/v1/wallet/*, the journal of bff/internal/wallet): every request carries an
// Idempotency-Key made once per submit, so a double click or a retried request moves money once. 202 is a movement
// whose outcome the exchange has not confirmed yet: it is pending, never failed.

// The journal's view of a movement (bff/internal/api/wallet/movements.go). status: pending (the exchange's answer was
// lost and is being resolved: never a failure), processing (taken, on its way), in_transit (left for the other
// exchange), completed, rejected, failed.
export type MovementStatus = "pending" | "processing" | "in_transit" | "completed" | "rejected" | "failed";

export type Movement = {
  id: string;
  kind: "transfer" | "withdraw" | "convert" | "gift" | "faucet" | "exchange_transfer";
  exchange: string;
  status: MovementStatus;
  state: string;
  direction: "in" | "out" | "internal";
  asset: string;
  amount: string;
  fee?: string;
  to_asset?: string;
  to_amount?: string;
  from_wallet?: string;
  to_wallet?: string;
  network?: string;
  address?: string;
  memo?: string;
  target_exchange?: string;
  recipient?: string;
  sender?: string;
  error?: string;
  created_at: string;
  updated_at: string;
};

export type Outcome = "done" | "processing" | "pending";

export type Submitted = { movement: Movement; outcome: Outcome };

// What the member is told: done, on its way, or pending (202: the exchange has not confirmed it yet). A refusal is
// an ApiError thrown instead.
export function outcomeOf(status: number, m: Movement): Outcome {
  if (status === 202 || m.status === "pending") return "pending";
  if (m.status === "completed") return "done";
  return "processing";
}

export type Settings = {
  faucet: boolean;
  faucet_asset?: string;
  faucet_amount?: string;
  fee_free?: { exchange: string; asset: string; min: string; max: string };
};

async function post(path: string, body: unknown, key: string): Promise<Submitted> {
  const r = await walletCall<Movement>("POST", path, { body, headers: { "Idempotency-Key": key } });
  return { movement: r.data, outcome: outcomeOf(r.status, r.data) };
}

export type TransferBody = { exchange: string; asset: string; amount: string; from: WalletName; to: WalletName };
export type WithdrawBody = {
  exchange: string;
  asset: string;
  network: string;
  amount: string;
  address: string;
  memo?: string;
};
export type QuoteBody = { exchange: string; from: string; to: string; from_amount: string };
export type ConvertQuote = {
  exchange: string;
  quote_id: string;
  from: string;
  to: string;
  from_amount: string;
  to_amount: string;
  price: string;
  expires_at: string;
};
export type GiftBody = { exchange: string; asset: string; amount: string; recipient: string };
export type ExchangeTransferBody = { exchange: string; target: string; asset: string; network: string; amount: string };

export const movementsApi = {
  newKey: newIdempotencyKey,
  transfer: (b: TransferBody, key: string) =>
    post("/api/v1/wallet/transfers", { ...b, from: b.from.toUpperCase(), to: b.to.toUpperCase() }, key),
  withdraw: (b: WithdrawBody, key: string) => post("/api/v1/wallet/withdrawals", b, key),
  quote: async (b: QuoteBody) => (await walletCall<ConvertQuote>("POST", "/api/v1/wallet/convert/quotes", { body: b })).data,
  convert: (q: ConvertQuote, key: string) =>
    post(
      "/api/v1/wallet/converts",
      { exchange: q.exchange, quote_id: q.quote_id, from: q.from, to: q.to, from_amount: q.from_amount, to_amount: q.to_amount },
      key,
    ),
  gift: (b: GiftBody, key: string) => post("/api/v1/wallet/gifts", b, key),
  faucet: (exchange: string, key: string) => post("/api/v1/wallet/faucet", { exchange }, key),
  exchangeTransfer: (b: ExchangeTransferBody, key: string) => post("/api/v1/wallet/exchange-transfers", b, key),
  settings: async (signal?: AbortSignal) => (await walletCall<Settings>("GET", "/api/v1/wallet/settings", { signal })).data,
  list: async (q: { kind?: string; exchange?: string; cursor?: string }, signal?: AbortSignal) =>
    (
      await walletCall<{ movements: Movement[]; next_cursor?: string }>("GET", "/api/v1/wallet/movements", {
        query: q,
        signal,
      })
    ).data,
};
