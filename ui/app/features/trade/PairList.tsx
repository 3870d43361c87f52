import { useLingui } from "@lingui/react/macro";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState } from "react";
import { Link } from "react-router";
import type { Instrument, Ticker } from "./api";
import { isDecimal, signOf } from "~/lib/decimal";
import { useFormat } from "~/lib/format";
import { favoriteId, useFavorites } from "~/lib/favorites";

type Props = {
  area: "spot" | "futures";
  exchange: string;
  marketType: string;
  current: string;
  instruments: Instrument[];
  tickers: Map<string, Ticker>;
};

// Rows are virtualized: only those in view (plus a few) are in the page, so
// thousands of pairs scroll smoothly.
export const PAIR_ROW_HEIGHT = 26;
const LIST_HEIGHT = 560;

export function PairList(p: Props) {
  const { t } = useLingui();
  const f = useFormat();
  const [query, setQuery] = useState("");
  const [onlyFavorites, setOnlyFavorites] = useState(false);
  const [favorites, toggleFavorite] = useFavorites();
  const rows = useMemo(() => {
    const q = query.trim().toUpperCase().replace(/[-_/ ]/g, "");
    return p.instruments
      .filter((i) => !onlyFavorites || favorites.has(favoriteId(p.exchange, p.marketType, i.symbol)))
      .filter((i) => !q || i.symbol.toUpperCase().replace(/[-_/]/g, "").includes(q) || i.base.toUpperCase().includes(q));
  }, [p.instruments, p.exchange, p.marketType, query, onlyFavorites, favorites]);
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => PAIR_ROW_HEIGHT,
    overscan: 10,
    initialRect: { width: 220, height: LIST_HEIGHT },
  });
  // The current pair scrolls into view when it changes or the list is filtered.
  const currentIndex = rows.findIndex((i) => i.symbol === p.current);
  useEffect(() => {
    if (currentIndex >= 0) virtualizer.scrollToIndex(currentIndex, { align: "auto" });
    // virtualizer is stable for the component's life
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [currentIndex, query, onlyFavorites]);

  return (
    <nav className="trade-panel trade-pairs" aria-label={t`Pairs`}>
      <input
        type="search"
        className="trade-search"
        placeholder={t`Search pairs`}
        aria-label={t`Search pairs`}
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      <div className="trade-tabs" role="group" aria-label={t`Pair filter`}>
        <button type="button" aria-pressed={!onlyFavorites} onClick={() => setOnlyFavorites(false)}>
          {t`All`}
        </button>
        <button type="button" aria-pressed={onlyFavorites} onClick={() => setOnlyFavorites(true)}>
          {t`Favorites`}
        </button>
      </div>
      {rows.length === 0 ? (
        <p className="trade-empty">{onlyFavorites ? t`No favorites yet.` : t`No pairs match.`}</p>
      ) : (
        <div ref={scrollRef} className="pair-scroll" data-testid="pair-scroll">
          <ul className="pair-list" data-testid="pair-list" data-count={rows.length} style={{ height: virtualizer.getTotalSize() }}>
            {virtualizer.getVirtualItems().map((v) => {
              const i = rows[v.index]!;
              const key = favoriteId(p.exchange, p.marketType, i.symbol);
              const fav = favorites.has(key);
              const tk = p.tickers.get(i.symbol);
              const ch = tk?.changePct24h;
              return (
                <li
                  key={i.symbol}
                  className={i.symbol === p.current ? "pair current" : "pair"}
                  style={{ transform: `translateY(${v.start}px)`, height: PAIR_ROW_HEIGHT }}
                >
                  <button
                    type="button"
                    className={fav ? "fav on" : "fav"}
                    aria-pressed={fav}
                    aria-label={fav ? t`Remove ${i.symbol} from favorites` : t`Add ${i.symbol} to favorites`}
                    onClick={() => toggleFavorite(key)}
                  >
                    {fav ? "★" : "☆"}
                  </button>
                  <Link to={`/${p.area}/${p.exchange}/${i.symbol}`} aria-current={i.symbol === p.current ? "page" : undefined}>
                    <span className="pair-symbol" title={i.symbol}>{i.symbol}</span>
                    <span className="pair-last">{isDecimal(tk?.last) ? f.step(tk.last, i.tickSize) : ""}</span>
                    <span className={isDecimal(ch) ? (signOf(ch) < 0 ? "pair-ch tick-down" : "pair-ch tick-up") : "pair-ch"}>
                      {isDecimal(ch) ? f.changePct(ch) : ""}
                    </span>
                  </Link>
                </li>
              );
            })}
          </ul>
        </div>
      )}
    </nav>
  );
}
