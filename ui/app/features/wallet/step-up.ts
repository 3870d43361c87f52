import { useEffect, useState } from "react";
import { isApiError } from "~/lib/errors";
import type { WalletProblem } from "./api";

// The fresh second factor for money leaving the account (withdrawals, transfers to another exchange, gifts): a
// member with an authenticator app whose session last passed it longer ago than the BFF's window
// (wallet.second_factor_window) gets 403 second_factor_stale with step_up, the page that asks for a code again
// (/otpauth?refresh=true: Kratos' login flow with refresh=true and aal=aal2). The form keeps what the member typed in
// sessionStorage (this tab only; never a code), goes there with return_to its own sub-page, and on the way back
// restores it and asks the member to confirm again.

export type StepUpPage = "withdraw" | "exchange" | "gift";

// What a form keeps: its pickers (exchange, coin, network, target) and its fields.
export type Draft = { exchange?: string; coin?: string; network?: string; target?: string; values: Record<string, string> };

const KEY = "exhub.wallet.step-up.";
// A draft older than this is dropped (the member went elsewhere).
const MAX_AGE_MS = 30 * 60_000;

export const STALE = "second_factor_stale";

export function isStale(e: unknown): boolean {
  return isApiError(e) && e.status === 403 && e.code === STALE;
}

// The page a refusal's step_up names, with return_to the form's sub-page. Only a same-origin path is followed.
export function stepUpPath(e: unknown, page: StepUpPage): string {
  const given = isApiError(e) ? (e.problem as WalletProblem).step_up : undefined;
  const base = typeof given === "string" && given.startsWith("/") && !given.startsWith("//") ? given : "/otpauth?refresh=true";
  const u = new URL(base, "http://x");
  if (!u.searchParams.has("refresh")) u.searchParams.set("refresh", "true");
  u.searchParams.set("return_to", `/wallet?page=${page}`);
  return u.pathname + u.search;
}

function storage(): Storage | undefined {
  try {
    return typeof window === "undefined" ? undefined : window.sessionStorage;
  } catch {
    return undefined;
  }
}

// Keeps a form's entries for the way back. Fields named like a code are never kept.
export function saveDraft(page: StepUpPage, d: Draft): void {
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(d.values)) if (!/code|otp|totp|secret|password/i.test(k)) values[k] = v;
  try {
    storage()?.setItem(KEY + page, JSON.stringify({ ...d, values, at: Date.now() }));
  } catch {
    // Storage full or blocked: the member types it again.
  }
}

// The entries kept for page, without removing them (see useDraft).
export function readDraft(page: StepUpPage): Draft | null {
  const raw = storage()?.getItem(KEY + page);
  if (!raw) return null;
  try {
    const d = JSON.parse(raw) as Draft & { at?: number };
    if (typeof d.at !== "number" || Date.now() - d.at > MAX_AGE_MS || typeof d.values !== "object" || d.values === null) {
      storage()?.removeItem(KEY + page);
      return null;
    }
    const values: Record<string, string> = {};
    for (const [k, v] of Object.entries(d.values)) if (typeof v === "string") values[k] = v;
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    return { exchange: str(d.exchange), coin: str(d.coin), network: str(d.network), target: str(d.target), values };
  } catch {
    storage()?.removeItem(KEY + page);
    return null;
  }
}

export function clearDraft(page: StepUpPage): void {
  storage()?.removeItem(KEY + page);
}

// The draft a form starts from (read once when it mounts) and whether to show "confirm again"; the stored copy is
// removed once the form has it, so a reload does not restore it twice.
export function useDraft(page: StepUpPage): { draft: Draft | null; restored: boolean; dismiss: () => void } {
  const [draft] = useState(() => readDraft(page));
  const [restored, setRestored] = useState(draft !== null);
  useEffect(() => {
    if (draft) clearDraft(page);
  }, [draft, page]);
  return { draft, restored, dismiss: () => setRestored(false) };
}
