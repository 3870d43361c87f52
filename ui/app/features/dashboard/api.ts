import { apiError } from "~/lib/errors";
import { apiFetch } from "~/lib/session";

// The member API under /api/v1/me, as the dashboard uses it. Every call goes
// through apiFetch (same-origin cookie, CSRF header on state-changing
// methods); a failure is an ApiError carrying the problem document.

export type LastLogin = { at?: string; ip?: string };

export type Profile = {
  id: string;
  nickname?: string;
  email?: string;
  phone?: string;
  email_verified?: boolean;
  phone_verified?: boolean;
  last_login?: LastLogin;
};

export type SecurityState = {
  withdraw_locked?: boolean;
  // RFC 3339; in the future while withdrawals are locked after a security change.
  withdraw_locked_until?: string;
  events?: { kind: string; at: string }[];
};

export type KycState =
  "none" | "pending" | "in_review" | "completed" | "declined";
export type KycKind = "person" | "company";

export type KycDocument = {
  id: string;
  file_name: string;
  content_type: string;
  size: number;
  created_at?: string;
};

export type Kyc = {
  state: KycState;
  kind?: KycKind;
  reason?: string;
  documents?: KycDocument[];
  // Per-exchange KYC flags.
  exchanges?: { exchange: string; verified: boolean }[];
  max_file_bytes?: number;
};

export type RewardTotal = { coin: string; settled: string; unsettled: string };
export type Referee = { nickname?: string; joined_at?: string };

// One referral reward: a share of a referee's trading fee (decimal string).
export type RewardRow = {
  id: string;
  amount: string;
  coin: string;
  state: "settled" | "unsettled";
  created_at: string;
  settled_at?: string;
};

export type Referral = {
  code: string;
  referees: Referee[];
  totals: RewardTotal[];
  // Newest first, at most 200.
  rewards?: RewardRow[];
};

export type FavoriteKey = {
  exchange: string;
  market_type: string;
  symbol: string;
};
export type Preferences = { version: number; preferences: PreferencesDoc };
export type PreferencesDoc = {
  theme?: string;
  language?: string;
  alerts?: Record<string, boolean>;
  sound_volume?: string;
  sub_pages?: Record<string, string>;
  // The trade screen's chart layout and account-tab switches
  // (features/trade/trade-layout.ts).
  trade?: TradePrefsDoc;
};
export type TradePrefsDoc = {
  chart_type?: number;
  interval?: string;
  indicators?: string[];
  positions_all?: boolean;
  open_orders_all?: boolean;
  depth_steps?: number;
};

export const ME = "/api/v1/me";
export const paths = {
  profile: `${ME}/profile`,
  security: `${ME}/security`,
  kyc: `${ME}/kyc`,
  kycDocuments: `${ME}/kyc/documents`,
  kycSubmit: `${ME}/kyc/submit`,
  referral: `${ME}/referral`,
  favorites: `${ME}/favorites`,
  preferences: `${ME}/preferences`,
} as const;

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// One JSON call; resolves with the body of a 2xx answer, else throws ApiError.
export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const init: RequestInit = {
    method,
    headers: { Accept: "application/json", ...headers },
  };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] =
      "application/json";
  }
  const res = await apiFetch(path, init);
  const out = await readBody(res);
  if (!res.ok) throw apiError(`${method} ${path}`, res, out);
  return out as T;
}

export const getProfile = () => call<Profile>("GET", paths.profile);
export const setNickname = (nickname: string) =>
  call<Profile>("PATCH", paths.profile, { nickname });
export const getSecurity = () => call<SecurityState>("GET", paths.security);
export const getKyc = () => call<Kyc>("GET", paths.kyc);
export const startKyc = (kind: KycKind) =>
  call<Kyc>("POST", paths.kyc, { kind });
export const submitKyc = () => call<Kyc>("POST", paths.kycSubmit);
export const getReferral = () => call<Referral>("GET", paths.referral);

export function uploadKycDocument(file: File): Promise<KycDocument> {
  const form = new FormData();
  form.append("file", file, file.name);
  return call<KycDocument>("POST", paths.kycDocuments, form);
}

// Query keys: one per resource, so a change invalidates exactly what it touched.
export const keys = {
  profile: ["me", "profile"] as const,
  security: ["me", "security"] as const,
  kyc: ["me", "kyc"] as const,
  referral: ["me", "referral"] as const,
};

// True while withdrawals are locked at `now`.
export function lockedUntil(
  s: SecurityState | undefined,
  now = Date.now(),
): Date | null {
  if (!s?.withdraw_locked_until) return null;
  const d = new Date(s.withdraw_locked_until);
  return Number.isFinite(d.getTime()) && d.getTime() > now ? d : null;
}
