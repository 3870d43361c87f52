import { useCallback, useSyncExternalStore } from "react";

// Favourite markets. Callers use the functions and the hook below; where the
// favourites live is a FavoritesStore behind them. Today that is this
// browser's local storage; a server-backed store for signed-in members can be
// swapped in with setFavoritesStore() without touching any caller.

// A market's id in the list: "exchange:marketType:symbol".
export function favoriteId(exchange: string, marketType: string, symbol: string): string {
  return `${exchange}:${marketType}:${symbol}`;
}

export interface FavoritesStore {
  // The ids, sorted; the same Set object until something changes (so it can
  // be a React snapshot).
  list(): ReadonlySet<string>;
  add(id: string): void;
  remove(id: string): void;
  // Calls back after every change (including changes made in another tab);
  // returns the unsubscribe function.
  subscribe(listener: () => void): () => void;
}

export const FAVORITES_KEY = "exhub.trade.favorites";

// Local storage under FAVORITES_KEY as a sorted JSON array of ids.
export function localFavoritesStore(key = FAVORITES_KEY): FavoritesStore {
  const listeners = new Set<() => void>();
  let cache: { raw: string | null; set: ReadonlySet<string> } | null = null;
  const readRaw = () => {
    try {
      return window.localStorage.getItem(key);
    } catch {
      return null;
    }
  };
  const list = (): ReadonlySet<string> => {
    const raw = readRaw();
    if (cache && cache.raw === raw) return cache.set;
    let set = new Set<string>();
    try {
      const v: unknown = raw ? JSON.parse(raw) : [];
      if (Array.isArray(v)) set = new Set(v.filter((x): x is string => typeof x === "string"));
    } catch {
      // a broken entry counts as no favourites
    }
    cache = { raw, set };
    return set;
  };
  const write = (set: Set<string>) => {
    try {
      window.localStorage.setItem(key, JSON.stringify([...set].sort()));
    } catch {
      // storage blocked or full: keep the choice for this page
      cache = { raw: readRaw(), set };
    }
    for (const l of listeners) l();
  };
  return {
    list,
    add(id) {
      if (list().has(id)) return;
      write(new Set(list()).add(id));
    },
    remove(id) {
      if (!list().has(id)) return;
      const set = new Set(list());
      set.delete(id);
      write(set);
    },
    subscribe(l) {
      listeners.add(l);
      const onStorage = (e: StorageEvent) => {
        if (e.key === null || e.key === key) l();
      };
      window.addEventListener("storage", onStorage);
      return () => {
        listeners.delete(l);
        window.removeEventListener("storage", onStorage);
      };
    },
  };
}

let store: FavoritesStore | null = null;
const swapListeners = new Set<() => void>();

function current(): FavoritesStore {
  store ??= localFavoritesStore();
  return store;
}

// Replaces where favourites are kept (a member's server-side list after
// sign-in; null goes back to local storage). Subscribers are moved over.
export function setFavoritesStore(next: FavoritesStore | null): void {
  store = next;
  for (const l of swapListeners) l();
}

export function listFavorites(): ReadonlySet<string> {
  return current().list();
}

export function hasFavorite(id: string): boolean {
  return current().list().has(id);
}

export function addFavorite(id: string): void {
  current().add(id);
}

export function removeFavorite(id: string): void {
  current().remove(id);
}

export function toggleFavorite(id: string): void {
  if (hasFavorite(id)) removeFavorite(id);
  else addFavorite(id);
}

export function subscribeFavorites(listener: () => void): () => void {
  let unsubscribe = current().subscribe(listener);
  const onSwap = () => {
    unsubscribe();
    unsubscribe = current().subscribe(listener);
    listener();
  };
  swapListeners.add(onSwap);
  return () => {
    swapListeners.delete(onSwap);
    unsubscribe();
  };
}

const empty: ReadonlySet<string> = new Set();

// The favourites and a toggle; re-renders on every change.
export function useFavorites(): [ReadonlySet<string>, (id: string) => void] {
  const set = useSyncExternalStore(subscribeFavorites, listFavorites, () => empty);
  const toggle = useCallback((id: string) => toggleFavorite(id), []);
  return [set, toggle];
}
