import { queryOptions } from "@tanstack/react-query";
import { apiError } from "~/lib/errors";
import { apiFetch } from "~/lib/session";
import type { components } from "./schema";
import { TRADING_KEY } from "./trading";

// The signed-in member's exchange accounts as the dashboard manages them
// (/api/v1/accounts: bff/internal/api/account/README.md): list, link an API
// key, unlink. Calls go through apiFetch (cookie, X-CSRF-Token on writes); a
// failure is an ApiError whose `code` says why (credentials_refused,
// withdraw_permission, account_exists, exchange_unavailable,
// unknown_exchange, invalid, broker_account, accounts_unavailable).

export type ExchangeAccount = components["schemas"]["ExchangeAccount"];
export type AccountList = components["schemas"]["ExchangeAccounts"];

// What POST /api/v1/accounts takes. The key, secret and passphrase go out in
// this one request and are not kept anywhere in the app.
export type LinkAccount = {
  exchange: string;
  name?: string;
  api_key: string;
  api_secret: string;
  passphrase?: string;
};

export const ACCOUNTS_PATH = "/api/v1/accounts";

// Exchanges whose API keys come with a passphrase.
const PASSPHRASE_EXCHANGES: ReadonlySet<string> = new Set(["okx"]);

export function needsPassphrase(exchange: string): boolean {
  return PASSPHRASE_EXCHANGES.has(exchange);
}

async function send<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  const init: RequestInit = { method, headers, signal };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await apiFetch(path, init);
  const text = await res.text();
  let out: unknown;
  try {
    out = text === "" ? undefined : JSON.parse(text);
  } catch {
    out = text;
  }
  if (!res.ok) throw apiError(`${method} ${path}`, res, out);
  return out as T;
}

export const accountsApi = {
  list: (signal?: AbortSignal) => send<AccountList>("GET", ACCOUNTS_PATH, undefined, signal),
  link: (body: LinkAccount) => send<ExchangeAccount>("POST", ACCOUNTS_PATH, body),
  unlink: (id: string) => send<void>("DELETE", `${ACCOUNTS_PATH}/${encodeURIComponent(id)}`),
};

export const ACCOUNTS_KEY = ["accounts"] as const;

export const accountsQueries = {
  // While a broker account is being made the list is read again every 5 s:
  // one is provisioning, or broker mode has not made the first one yet (a new
  // member's list is empty for a moment after sign-up).
  list: () =>
    queryOptions({
      queryKey: ACCOUNTS_KEY,
      queryFn: ({ signal }) => accountsApi.list(signal),
      refetchInterval: (q) => {
        const d = q.state.data;
        if (!d) return false;
        const waiting =
          (d.broker && d.accounts.length === 0) || d.accounts.some((a) => a.status === "provisioning");
        return waiting ? 5_000 : false;
      },
    }),
};

// Every cached view of the member's accounts (the dashboard's and the trade
// screen's) after a change.
export const accountsChangedKeys = [ACCOUNTS_KEY, [...TRADING_KEY, "accounts"]] as const;
