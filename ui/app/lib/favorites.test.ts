import { act, renderHook } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  addFavorite,
  FAVORITES_KEY,
  hasFavorite,
  listFavorites,
  removeFavorite,
  setFavoritesStore,
  subscribeFavorites,
  toggleFavorite,
  useFavorites,
  type FavoritesStore,
} from "./favorites";

// A store kept in memory, standing in for a server-backed one.
function memoryStore(initial: string[] = []): FavoritesStore & { listeners: Set<() => void> } {
  let set: ReadonlySet<string> = new Set(initial);
  const listeners = new Set<() => void>();
  const emit = () => listeners.forEach((l) => l());
  return {
    listeners,
    list: () => set,
    add: (id) => {
      set = new Set([...set, id]);
      emit();
    },
    remove: (id) => {
      set = new Set([...set].filter((x) => x !== id));
      emit();
    },
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  };
}

afterEach(() => setFavoritesStore(null));

describe("favorites store", () => {
  it("adds, removes, toggles and notifies once per change", () => {
    const seen = vi.fn();
    const off = subscribeFavorites(seen);
    addFavorite("okx:SWAP:BTC-USDT-SWAP");
    addFavorite("okx:SWAP:BTC-USDT-SWAP"); // already there: no change
    toggleFavorite("binance:SPOT:ETHUSDT");
    expect([...listFavorites()]).toEqual(["binance:SPOT:ETHUSDT", "okx:SWAP:BTC-USDT-SWAP"]);
    expect(hasFavorite("binance:SPOT:ETHUSDT")).toBe(true);
    toggleFavorite("binance:SPOT:ETHUSDT");
    removeFavorite("nope");
    expect(seen).toHaveBeenCalledTimes(3);
    expect(JSON.parse(localStorage.getItem(FAVORITES_KEY)!)).toEqual(["okx:SWAP:BTC-USDT-SWAP"]);
    // The snapshot is stable while nothing changes.
    expect(listFavorites()).toBe(listFavorites());
    off();
    addFavorite("x");
    expect(seen).toHaveBeenCalledTimes(3);
  });

  it("follows changes made in another tab", () => {
    const { result } = renderHook(() => useFavorites());
    expect(result.current[0].size).toBe(0);
    act(() => {
      localStorage.setItem(FAVORITES_KEY, JSON.stringify(["okx:SPOT:BTC-USDT"]));
      window.dispatchEvent(new StorageEvent("storage", { key: FAVORITES_KEY }));
    });
    expect([...result.current[0]]).toEqual(["okx:SPOT:BTC-USDT"]);
  });

  it("can be replaced by another store without touching callers", () => {
    addFavorite("local:SPOT:A");
    const { result } = renderHook(() => useFavorites());
    expect([...result.current[0]]).toEqual(["local:SPOT:A"]);
    const remote = memoryStore(["server:SWAP:B"]);
    act(() => setFavoritesStore(remote));
    expect([...result.current[0]]).toEqual(["server:SWAP:B"]);
    expect(remote.listeners.size).toBe(1);
    act(() => result.current[1]("server:SWAP:C"));
    expect([...result.current[0]]).toEqual(["server:SWAP:B", "server:SWAP:C"]);
    // Local storage is left alone while the other store is in use.
    expect(JSON.parse(localStorage.getItem(FAVORITES_KEY)!)).toEqual(["local:SPOT:A"]);
    act(() => setFavoritesStore(null));
    expect(remote.listeners.size).toBe(0);
    expect([...result.current[0]]).toEqual(["local:SPOT:A"]);
  });
});
