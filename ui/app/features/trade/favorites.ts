// Favourite pairs, kept in this browser until accounts store them.
export const FAVORITES_KEY = "exhub.trade.favorites";

export function favoriteKey(exchange: string, marketType: string, symbol: string): string {
  return `${exchange}:${marketType}:${symbol}`;
}

export function readFavorites(): Set<string> {
  try {
    const raw = window.localStorage.getItem(FAVORITES_KEY);
    const list: unknown = raw ? JSON.parse(raw) : [];
    return new Set(Array.isArray(list) ? list.filter((x): x is string => typeof x === "string") : []);
  } catch {
    return new Set();
  }
}

export function toggleFavorite(key: string): Set<string> {
  const set = readFavorites();
  if (set.has(key)) set.delete(key);
  else set.add(key);
  try {
    window.localStorage.setItem(FAVORITES_KEY, JSON.stringify([...set].sort()));
  } catch {
    // storage full or blocked: the choice lasts for this page only
  }
  return set;
}
