import { useSyncExternalStore } from "react";
import { readStored } from "~/preferences";

// The session as the browser holds it: a token and the user info that came
// with it. Until accounts land (Kratos), nothing sets them except a login
// flow; protected routes only look at whether a token is stored.
export const SESSION_TOKEN_KEY = "exhub.session.token";
export const USER_INFO_KEY = "exhub.session.user";

export type UserInfo = {
  // Present once a user is logged in; the top bar shows the member menus then.
  tid?: string;
  // The account is a Japanese one (the X link follows it).
  tisjp?: boolean;
};

export type Session = { token: string; user: UserInfo } | null;

const listeners = new Set<() => void>();
let cached: { raw: string; value: Session } | null = null;

function readUser(): UserInfo {
  const raw = readStored(USER_INFO_KEY);
  if (!raw) return {};
  try {
    const v: unknown = JSON.parse(raw);
    if (!v || typeof v !== "object") return {};
    const o = v as Record<string, unknown>;
    return {
      tid: typeof o.tid === "string" || typeof o.tid === "number" ? String(o.tid) : undefined,
      tisjp: o.tisjp === true || o.tisjp === 1,
    };
  } catch {
    return {};
  }
}

export function currentSession(): Session {
  const token = readStored(SESSION_TOKEN_KEY);
  const rawUser = readStored(USER_INFO_KEY) ?? "";
  const raw = `${token ?? ""}\u0000${rawUser}`;
  if (cached && cached.raw === raw) return cached.value;
  const value: Session = token ? { token, user: readUser() } : null;
  cached = { raw, value };
  return value;
}

export function hasSession(): boolean {
  return currentSession() !== null;
}

// Logged in in the sense of the navigation: a token and user info with a tid.
export function isLoggedIn(s: Session): boolean {
  return s !== null && typeof s.user.tid === "string" && s.user.tid !== "";
}

function notify(): void {
  for (const l of listeners) l();
}

export function setSession(token: string, user: UserInfo): void {
  try {
    window.localStorage.setItem(SESSION_TOKEN_KEY, token);
    window.localStorage.setItem(USER_INFO_KEY, JSON.stringify(user));
  } catch {
    // storage blocked: the session lasts for this page only
  }
  notify();
}

export function clearSession(): void {
  try {
    window.localStorage.removeItem(SESSION_TOKEN_KEY);
    window.localStorage.removeItem(USER_INFO_KEY);
  } catch {
    // nothing stored
  }
  notify();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  const onStorage = (e: StorageEvent) => {
    if (e.key === null || e.key === SESSION_TOKEN_KEY || e.key === USER_INFO_KEY) l();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(l);
    window.removeEventListener("storage", onStorage);
  };
}

export function useSession(): Session {
  return useSyncExternalStore(subscribe, currentSession, () => null);
}
