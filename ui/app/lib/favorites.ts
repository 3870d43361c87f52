import { useCallback, useSyncExternalStore } from "react";

// Favourite markets, kept in this browser until accounts store them. The
// key and format are the ones the trade screen's pair list uses
// ("exchange:marketType:symbol" in a JSON array), so both show the same stars.
export const FAVORITES_KEY = "exhub.trade.favorites";

export function favoriteId(exchange: string, marketType: string, symbol: string): string {
  return `${exchange}:${marketType}:${symbol}`;
}

const listeners = new Set<() => void>();
let cache: { raw: string | null; set: ReadonlySet<string> } | null = null;

function readRaw(): string | null {
  try {
    return window.localStorage.getItem(FAVORITES_KEY);
  } catch {
    return null;
  }
}

export function readFavoriteSet(): ReadonlySet<string> {
  const raw = readRaw();
  if (cache && cache.raw === raw) return cache.set;
  let set = new Set<string>();
  try {
    const list: unknown = raw ? JSON.parse(raw) : [];
    if (Array.isArray(list)) set = new Set(list.filter((x): x is string => typeof x === "string"));
  } catch {
    // a broken entry counts as no favourites
  }
  cache = { raw, set };
  return set;
}

export function setFavorite(id: string, on: boolean): void {
  const set = new Set(readFavoriteSet());
  if (on) set.add(id);
  else set.delete(id);
  try {
    window.localStorage.setItem(FAVORITES_KEY, JSON.stringify([...set].sort()));
  } catch {
    // storage blocked: nothing is kept
  }
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  const onStorage = (e: StorageEvent) => {
    if (e.key === null || e.key === FAVORITES_KEY) l();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(l);
    window.removeEventListener("storage", onStorage);
  };
}

const empty: ReadonlySet<string> = new Set();

export function useFavorites(): [ReadonlySet<string>, (id: string) => void] {
  const set = useSyncExternalStore(subscribe, readFavoriteSet, () => empty);
  const toggle = useCallback((id: string) => setFavorite(id, !readFavoriteSet().has(id)), []);
  return [set, toggle];
}
