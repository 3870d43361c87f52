import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { api } from "~/api/client";
import { queryClient } from "~/api/queries";

// Who is signed in, as the BFF says (GET /api/v1/me). The session itself is
// Kratos' HttpOnly cookie (exhub_session): nothing here stores a token, and
// the browser script never sees one.

export type Member = {
  id: string;
  email?: string;
  phone?: string;
  email_verified: boolean;
  phone_verified: boolean;
  nickname?: string;
  locale?: string;
  aal: string;
  two_factor: { totp: boolean; lookup_secret: boolean };
  authenticated_at?: string;
  session_expires_at?: string;
};

// What the navigation reads about the member (the names of the old
// token-based session are kept so the shell needs no change).
export type UserInfo = {
  // The member id; present once signed in.
  tid?: string;
  // A Japanese account: the member's language is Japanese.
  tisjp?: boolean;
};

export type Session = { member: Member; user: UserInfo } | null;

export type MeState =
  | { status: "unknown" }
  | { status: "loading" }
  | { status: "anonymous" }
  // Signed in with a password, but the member enabled 2FA: the second factor is still due (/otpauth).
  | { status: "aal2_required" }
  | { status: "member"; member: Member }
  | { status: "error"; error: Error };

// Keys of the old localStorage session; removed on first load.
export const SESSION_TOKEN_KEY = "exhub.session.token";
export const USER_INFO_KEY = "exhub.session.user";
export const CSRF_COOKIE = "exhub_csrf";
export const CSRF_HEADER = "X-CSRF-Token";
export const ME_PATH = "/api/v1/me";

function origin(): string {
  return typeof window === "undefined" ? "http://localhost" : window.location.origin;
}

// The value of a cookie readable by script (the CSRF token), or undefined.
export function readCookie(name: string): string | undefined {
  if (typeof document === "undefined") return undefined;
  for (const part of document.cookie.split(";")) {
    const i = part.indexOf("=");
    if (i < 0) continue;
    if (part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

// Adds the CSRF header to a state-changing request (the BFF refuses one without it).
export function withCsrf(req: Request): Request {
  if (SAFE_METHODS.has(req.method.toUpperCase())) return req;
  const token = readCookie(CSRF_COOKIE);
  if (!token || req.headers.has(CSRF_HEADER)) return req;
  const headers = new Headers(req.headers);
  headers.set(CSRF_HEADER, token);
  return new Request(req, { headers });
}

// openapi-fetch middleware for the API client: `api().use(csrfMiddleware)`.
export const csrfMiddleware = {
  onRequest({ request }: { request: Request }): Request {
    return withCsrf(request);
  },
};

// fetch for /api calls: same-origin cookies, CSRF header on state-changing methods.
export function apiFetch(path: string, init?: RequestInit): Promise<Response> {
  const req = withCsrf(new Request(new URL(path, origin()), { credentials: "same-origin", ...init }));
  return globalThis.fetch(req);
}

function isMember(v: unknown): v is Member {
  if (!v || typeof v !== "object") return false;
  const o = v as Record<string, unknown>;
  return typeof o.id === "string" && o.id !== "";
}

function normalize(o: Member): Member {
  const tf = (o.two_factor ?? {}) as Partial<Member["two_factor"]>;
  return {
    ...o,
    email_verified: o.email_verified === true,
    phone_verified: o.phone_verified === true,
    aal: typeof o.aal === "string" ? o.aal : "aal1",
    two_factor: { totp: tf.totp === true, lookup_secret: tf.lookup_secret === true },
  };
}

function problemCode(body: unknown): string | undefined {
  if (body && typeof body === "object" && typeof (body as { code?: unknown }).code === "string") {
    return (body as { code: string }).code;
  }
  return undefined;
}

// The BFF sets the CSRF cookie (readable by script, living as long as the
// session) with every member answer, and the logout clears it: without it the
// browser holds no session worth asking about, so a visitor's page load makes
// no request bound to answer 401.
export function mayHaveSession(): boolean {
  return readCookie(CSRF_COOKIE) !== undefined;
}

function dropSessionHint(): void {
  if (typeof document !== "undefined") document.cookie = `${CSRF_COOKIE}=; Max-Age=0; Path=/; SameSite=Strict`;
}

// The member on a page load: anonymous without asking when no session can be there.
export async function probeMe(): Promise<MeState> {
  if (!mayHaveSession()) return { status: "anonymous" };
  return fetchMe();
}

// One call to GET /api/v1/me (through the API client and its transport), mapped to a state.
export async function fetchMe(): Promise<MeState> {
  let res: { data?: unknown; error?: unknown; response: Response };
  try {
    // The path joins the generated schema when the BFF's document is regenerated.
    res = await (api().GET as unknown as (p: string) => Promise<typeof res>)(ME_PATH);
  } catch (e) {
    return { status: "error", error: e instanceof Error ? e : new Error(String(e)) };
  }
  const { status } = res.response;
  if (status === 401) {
    // The session ended (expired, or logged out elsewhere): the next page load need not ask.
    dropSessionHint();
    return { status: "anonymous" };
  }
  if (status === 403 && problemCode(res.error) === "aal2_required") return { status: "aal2_required" };
  if (!res.response.ok) return { status: "error", error: new Error(`${ME_PATH} answered ${status}`) };
  // A body without a member id is no session.
  return isMember(res.data) ? { status: "member", member: normalize(res.data) } : { status: "anonymous" };
}

// The member lives in the app's query cache (key ME_KEY): loaders and
// screens read the same entry, concurrent readers share one request, and
// `queryClient.invalidateQueries({ queryKey: ME_KEY })` asks again.
export const ME_KEY = ["session", "me"] as const;
// How long an answer counts as current; screens on view also refetch on window focus.
export const ME_STALE_MS = 30_000;

const meQuery = { queryKey: ME_KEY, queryFn: probeMe, staleTime: ME_STALE_MS, retry: false } as const;

export function meState(): MeState {
  const q = queryClient.getQueryState<MeState>(ME_KEY);
  if (q?.data) return q.data;
  return q?.fetchStatus === "fetching" ? { status: "loading" } : { status: "unknown" };
}

// Loads the member unless known and current (force: ask again, e.g. after sign-in).
export async function loadMe(opts: { force?: boolean } = {}): Promise<MeState> {
  if (opts.force) {
    // An answer still on its way predates what changed: drop it.
    await queryClient.cancelQueries({ queryKey: ME_KEY });
    // Asked after a sign-in or a change: the BFF's answer sets the CSRF cookie, so no probe first.
    return queryClient.fetchQuery({ ...meQuery, queryFn: fetchMe, staleTime: 0 });
  }
  const known = queryClient.getQueryData<MeState>(ME_KEY);
  if (known && known.status !== "error") return known;
  return queryClient.fetchQuery({ ...meQuery, staleTime: known ? 0 : ME_STALE_MS });
}

function put(next: MeState): void {
  void queryClient.cancelQueries({ queryKey: ME_KEY });
  queryClient.setQueryData<MeState>(ME_KEY, next);
}

// Forgets the member (after logout).
export function clearSession(): void {
  removeLegacyKeys();
  put({ status: "anonymous" });
}

// Puts a known member into the cache (tests; right after a change the BFF confirmed).
export function setMember(member: Member): void {
  put({ status: "member", member: normalize(member) });
}

// Compatibility with the old token session: seeds a member with the given id.
export function setSession(_token: string, user: UserInfo): void {
  setMember({
    id: user.tid ?? "member",
    email_verified: false,
    phone_verified: false,
    aal: "aal1",
    two_factor: { totp: false, lookup_secret: false },
    locale: user.tisjp ? "ja" : undefined,
  });
}

// Back to the initial state (tests).
export function resetSession(): void {
  void queryClient.cancelQueries({ queryKey: ME_KEY });
  queryClient.removeQueries({ queryKey: ME_KEY });
}

const sessions = new WeakMap<Member, Session>();

function sessionOf(s: MeState): Session {
  if (s.status !== "member") return null;
  let v = sessions.get(s.member);
  if (!v) {
    v = { member: s.member, user: { tid: s.member.id, tisjp: (s.member.locale ?? "").startsWith("ja") } };
    sessions.set(s.member, v);
  }
  return v;
}

export function currentSession(): Session {
  return sessionOf(meState());
}

export function hasSession(): boolean {
  return currentSession() !== null;
}

// Signed in in the sense of the navigation: a member with an id.
export function isLoggedIn(s: Session): boolean {
  return s !== null && typeof s.user.tid === "string" && s.user.tid !== "";
}

let legacyRemoved = false;
function removeLegacyKeys(): void {
  try {
    window.localStorage.removeItem(SESSION_TOKEN_KEY);
    window.localStorage.removeItem(USER_INFO_KEY);
  } catch {
    // storage blocked
  }
}

// The member state; asks the BFF when not known or no longer current.
export function useMe(): MeState {
  useEffect(() => {
    if (!legacyRemoved) {
      legacyRemoved = true;
      removeLegacyKeys();
    }
  }, []);
  const q = useQuery(meQuery, queryClient);
  if (q.data) return q.data;
  return q.isFetching ? { status: "loading" } : { status: "unknown" };
}

// The signed-in member, or null.
export function useMember(): Member | null {
  const s = useMe();
  return s.status === "member" ? s.member : null;
}

export function useSession(): Session {
  return sessionOf(useMe());
}

// Logs out through Kratos' browser logout flow. Only when Kratos confirmed is
// the member forgotten (the caller then goes to /login); false leaves the
// session as it was, so the caller can say the logout failed.
// The Kratos client loads on the first logout, not with every page.
export async function logout(): Promise<boolean> {
  const { kratosLogout } = await import("~/features/auth/kratos");
  const ok = await kratosLogout();
  if (ok) clearSession();
  return ok;
}
