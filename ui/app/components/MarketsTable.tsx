import { useLingui } from "@lingui/react/macro";
import {
  createColumnHelper,
  createSortedRowModel,
  rowSortingFeature,
  sortFn_alphanumeric,
  tableFeatures,
  useTable,
  type SortingState,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, useState } from "react";
import { useNavigate } from "react-router";
import { compareDecimals, signOf } from "~/lib/decimal";
import { useFormat } from "~/lib/format";
import type { MarketRow } from "~/lib/markets";

export const ROW_HEIGHT = 44;

const features = tableFeatures({
  rowSortingFeature,
  sortedRowModel: createSortedRowModel(),
  sortFns: { alphanumeric: sortFn_alphanumeric },
});

const col = createColumnHelper<typeof features, MarketRow>();

const byDecimal = (field: keyof MarketRow) => (a: { original: MarketRow }, b: { original: MarketRow }) =>
  compareDecimals(String(a.original[field]), String(b.original[field]));

function pctClass(pct: string): string {
  return ({ [-1]: "down", 0: "flat", 1: "up" } as const)[signOf(pct)];
}

export type MarketsTableProps = {
  rows: MarketRow[];
  favorites: ReadonlySet<string>;
  onToggleFavorite: (id: string) => void;
  // The rows on screen changed (for live subscriptions).
  onVisibleChange?: (rows: MarketRow[]) => void;
  height?: number;
};

// The Markets list: every column sortable, virtualized so thousands of rows
// scroll smoothly. Rows are div-based (role="table") so that only the rows
// on screen exist in the page.
export function MarketsTable({ rows, favorites, onToggleFavorite, onVisibleChange, height = 600 }: MarketsTableProps) {
  const { t } = useLingui();
  const f = useFormat();
  const navigate = useNavigate();
  const [sorting, setSorting] = useState<SortingState>([{ id: "quoteVolume24h", desc: true }]);
  const columns = useMemo(
    () =>
      col.columns([
      col.accessor("id", { id: "favorite", header: () => t`Favorite`, enableSorting: true, sortFn: (a, b) => Number(favorites.has(a.original.id)) - Number(favorites.has(b.original.id)) }),
      col.accessor("symbol", { header: () => t`Market`, sortFn: "alphanumeric" }),
      col.accessor("exchangeName", { header: () => t`Exchange`, sortFn: "alphanumeric" }),
      col.accessor("last", { header: () => t`Last price`, sortFn: byDecimal("last") }),
      col.accessor("changePct24h", { header: () => t`24h change`, sortFn: byDecimal("changePct24h") }),
      col.accessor("high24h", { header: () => t`24h high`, sortFn: byDecimal("high24h") }),
      col.accessor("low24h", { header: () => t`24h low`, sortFn: byDecimal("low24h") }),
      col.accessor("quoteVolume24h", { header: () => t`24h volume (quote)`, sortFn: byDecimal("quoteVolume24h") }),
      ]),
    [t, favorites],
  );
  const table = useTable(
    {
      features,
      columns,
      data: rows,
      state: { sorting },
      onSortingChange: setSorting,
      getRowId: (r) => r.id,
    },
    (s) => s,
  );
  const sorted = table.getRowModel().rows;
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: sorted.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    initialRect: { width: 1000, height },
  });
  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? -1;
  const visibleKey = `${first}:${last}:${sorted.length}:${sorted[first]?.id ?? ""}:${sorted[last]?.id ?? ""}`;
  const cb = useRef(onVisibleChange);
  cb.current = onVisibleChange;
  useEffect(() => {
    cb.current?.(sorted.slice(first, last + 1).map((r) => r.original));
    // visibleKey names the visible window
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [visibleKey]);

  const headers = table.getHeaderGroups()[0]?.headers ?? [];
  return (
    <div className="markets-table" role="table" aria-label={t`Markets`} aria-rowcount={sorted.length + 1} data-testid="markets-table">
      <div role="rowgroup" className="markets-head">
        <div role="row" className="markets-row" aria-rowindex={1}>
          {headers.map((h) => {
            const dir = h.column.getIsSorted();
            const label = h.column.columnDef.header;
            const text = typeof label === "function" ? (label as () => string)() : String(label ?? h.id);
            return (
              <div
                key={h.id}
                role="columnheader"
                className={`markets-cell markets-cell--${h.id}`}
                aria-sort={dir === "asc" ? "ascending" : dir === "desc" ? "descending" : "none"}
              >
                <button type="button" className="sort-button" onClick={h.column.getToggleSortingHandler()} data-column={h.id}>
                  <span className={h.id === "favorite" ? "visually-hidden" : undefined}>{text}</span>
                  {h.id === "favorite" ? <span aria-hidden="true">★</span> : null}
                  <span className="sort-mark" aria-hidden="true">
                    {dir === "asc" ? "▲" : dir === "desc" ? "▼" : ""}
                  </span>
                </button>
              </div>
            );
          })}
        </div>
      </div>
      <div ref={scrollRef} className="markets-scroll" style={{ height }} role="rowgroup" data-testid="markets-scroll">
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {items.map((v) => {
            const row = sorted[v.index]!;
            const r = row.original;
            const fav = favorites.has(r.id);
            const area = r.type === "SPOT" ? "spot" : "futures";
            const to = `/${area}/${encodeURIComponent(r.exchange)}/${encodeURIComponent(r.symbol)}`;
            return (
              <div
                key={row.id}
                role="row"
                aria-rowindex={v.index + 2}
                className="markets-row markets-body-row"
                data-symbol={r.symbol}
                data-exchange={r.exchange}
                style={{ position: "absolute", top: 0, left: 0, right: 0, height: ROW_HEIGHT, transform: `translateY(${v.start}px)` }}
                onClick={(e) => {
                  if ((e.target as HTMLElement).closest("button,a")) return;
                  void navigate(to);
                }}
              >
                <div role="cell" className="markets-cell markets-cell--favorite">
                  <button
                    type="button"
                    className={`star${fav ? " star--on" : ""}`}
                    aria-pressed={fav}
                    aria-label={fav ? t`Remove ${r.symbol} from favorites` : t`Add ${r.symbol} to favorites`}
                    onClick={() => onToggleFavorite(r.id)}
                  >
                    {fav ? "★" : "☆"}
                  </button>
                </div>
                <div role="cell" className="markets-cell markets-cell--symbol">
                  <a
                    href={to}
                    onClick={(e) => {
                      e.preventDefault();
                      void navigate(to);
                    }}
                  >
                    <span className="market-base">{r.base}</span>
                    <span className="market-quote">/{r.quote}</span>
                    <span className="market-symbol">{r.symbol}</span>
                  </a>
                </div>
                <div role="cell" className="markets-cell markets-cell--exchangeName">
                  {r.logo ? <img src={r.logo} alt="" width={16} height={16} className="menu-icon" /> : null}
                  {r.exchangeName}
                </div>
                <div role="cell" className={`markets-cell markets-cell--last num tick-${r.direction}`} data-testid="last" data-direction={r.direction}>
                  {f.step(r.last, r.tickSize)}
                </div>
                <div role="cell" className={`markets-cell markets-cell--changePct24h num ${pctClass(r.changePct24h)}`}>
                  {f.changePct(r.changePct24h)}
                </div>
                <div role="cell" className="markets-cell markets-cell--high24h num">
                  {f.step(r.high24h, r.tickSize)}
                </div>
                <div role="cell" className="markets-cell markets-cell--low24h num">
                  {f.step(r.low24h, r.tickSize)}
                </div>
                <div
                  role="cell"
                  className="markets-cell markets-cell--quoteVolume24h num"
                  title={r.quoteVolume24h ? f.full(r.quoteVolume24h) : undefined}
                  data-value={r.quoteVolume24h}
                >
                  {f.compact(r.quoteVolume24h)}
                </div>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
