import type { Exchange, Instrument, MarketType, Ticker } from "~/api/client";
import { favoriteId } from "./favorites";
import type { TickDirection } from "./tick";

// One row of the Markets list: an instrument of an exchange with its latest
// ticker values (decimal strings as the API sends them).
export type MarketRow = {
  id: string;
  exchange: string;
  exchangeName: string;
  logo: string | null;
  type: MarketType;
  symbol: string;
  base: string;
  quote: string;
  // The instrument's price step: prices show its decimals.
  tickSize: string;
  last: string;
  changePct24h: string;
  high24h: string;
  low24h: string;
  quoteVolume24h: string;
  direction: TickDirection;
};

export type TickerFields = Partial<Pick<Ticker, "last" | "changePct24h" | "high24h" | "low24h" | "quoteVolume24h">>;

export function buildRows(
  ex: Pick<Exchange, "slug" | "name">,
  logo: string | null,
  type: MarketType,
  instruments: Instrument[],
  tickers: Ticker[],
): MarketRow[] {
  const bySymbol = new Map(tickers.map((t) => [t.symbol, t]));
  return instruments.map((i) => {
    const t = bySymbol.get(i.symbol);
    return {
      id: favoriteId(ex.slug, type, i.symbol),
      exchange: ex.slug,
      exchangeName: ex.name,
      logo,
      type,
      symbol: i.symbol,
      base: i.base,
      quote: i.quote,
      tickSize: i.tickSize,
      last: t?.last ?? "",
      changePct24h: t?.changePct24h ?? "",
      high24h: t?.high24h ?? "",
      low24h: t?.low24h ?? "",
      quoteVolume24h: t?.quoteVolume24h ?? "",
      direction: "flat",
    };
  });
}

export type MarketFilter = { type: MarketType; query: string; favoritesOnly: boolean; favorites: ReadonlySet<string> };

// Search matches the symbol, the base or quote asset and the exchange name,
// ignoring case and separators ("btc usdt" finds BTC-USDT-SWAP).
export function filterRows(rows: MarketRow[], f: MarketFilter): MarketRow[] {
  const words = f.query
    .toLowerCase()
    .split(/[\s/\-_]+/)
    .filter((w) => w !== "");
  return rows.filter((r) => {
    if (r.type !== f.type) return false;
    if (f.favoritesOnly && !f.favorites.has(r.id)) return false;
    if (words.length === 0) return true;
    const hay = `${r.symbol} ${r.base} ${r.quote} ${r.exchangeName} ${r.exchange}`.toLowerCase().replace(/[-_/]/g, "");
    return words.every((w) => hay.includes(w));
  });
}

// Applies a live ticker to a row: a new row object when something changed,
// with the tick direction of the last price.
export function applyTicker(row: MarketRow, t: TickerFields, direction: (prev: string, next: string, d: TickDirection) => TickDirection): MarketRow {
  const last = t.last ?? row.last;
  const next: MarketRow = {
    ...row,
    last,
    changePct24h: t.changePct24h ?? row.changePct24h,
    high24h: t.high24h ?? row.high24h,
    low24h: t.low24h ?? row.low24h,
    quoteVolume24h: t.quoteVolume24h ?? row.quoteVolume24h,
    direction: direction(row.last, last, row.direction),
  };
  const same =
    next.last === row.last &&
    next.changePct24h === row.changePct24h &&
    next.high24h === row.high24h &&
    next.low24h === row.low24h &&
    next.quoteVolume24h === row.quoteVolume24h &&
    next.direction === row.direction;
  return same ? row : next;
}
