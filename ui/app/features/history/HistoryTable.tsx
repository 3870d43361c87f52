import { createColumnHelper, tableFeatures, useTable } from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useMemo, useRef, type ReactNode } from "react";

// A virtualized history table (TanStack Table for the columns, TanStack
// Virtual for the rows): only the rows in view are in the page, so thousands
// of rows scroll smoothly. Each cell also carries the value the CSV export
// writes for it (data-csv), so what is exported is what the table holds.

const features = tableFeatures({});

export type HistoryColumn<T> = {
  id: string;
  header: string;
  cell: (row: T) => ReactNode;
  // The cell's value in the CSV export (decimals as the API sent them, times in ISO 8601 UTC).
  csv: (row: T) => string;
  numeric?: boolean;
};

// The height of one row in CSS pixels (history.css keeps rows at this height).
export const ROW_HEIGHT = 34;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function HistoryTable<T extends Record<string, any>>({
  label,
  rows,
  columns,
  rowId,
  empty,
  testId,
  hasMore,
  loadingMore,
  onMore,
  moreLabel,
}: {
  label: string;
  rows: readonly T[];
  columns: readonly HistoryColumn<T>[];
  rowId: (row: T, index: number) => string;
  empty: ReactNode;
  testId: string;
  hasMore: boolean;
  loadingMore: boolean;
  onMore: () => void;
  moreLabel: string;
}) {
  const col = useMemo(() => createColumnHelper<typeof features, T>(), []);
  const defs = useMemo(
    () => col.columns(columns.map((c) => col.display({ id: c.id, header: () => c.header }))),
    [col, columns],
  );
  const data = useMemo(() => [...rows], [rows]);
  const table = useTable({ features, columns: defs, data, getRowId: (r, i) => rowId(r, i) }, (s) => s);
  const byId = new Map(columns.map((c) => [c.id, c]));
  const headers = table.getHeaderGroups()[0]?.headers ?? [];
  const model = table.getRowModel().rows;

  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: model.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtual.getVirtualItems();
  const lastShown = items.length > 0 ? items[items.length - 1]!.index : -1;
  // Scrolling near the end reads the next page.
  useEffect(() => {
    if (hasMore && !loadingMore && lastShown >= model.length - 10) onMore();
  }, [hasMore, loadingMore, lastShown, model.length, onMore]);

  const top = items.length > 0 ? items[0]!.start : 0;
  const bottom = items.length > 0 ? virtual.getTotalSize() - items[items.length - 1]!.end : 0;
  return (
    <div className="history-table-block">
      <div className="history-table-scroll" ref={scroller} role="region" aria-label={label} tabIndex={0} data-testid={`${testId}-scroll`}>
        <table className="history-table" data-testid={testId} aria-rowcount={model.length + 1}>
          <thead>
            <tr>
              {headers.map((h) => {
                const c = byId.get(h.id)!;
                return (
                  <th key={h.id} scope="col" className={c.numeric ? "num" : undefined} data-column={c.id}>
                    {c.header}
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {model.length === 0 ? (
              <tr>
                <td colSpan={columns.length} className="history-table-empty">
                  {empty}
                </td>
              </tr>
            ) : (
              <>
                {top > 0 ? (
                  <tr aria-hidden="true" className="history-spacer">
                    <td colSpan={columns.length} style={{ height: top }} />
                  </tr>
                ) : null}
                {items.map((v) => {
                  const r = model[v.index]!;
                  return (
                    <tr key={r.id} data-row={r.id} data-index={v.index} aria-rowindex={v.index + 2}>
                      {columns.map((c) => (
                        <td key={c.id} className={c.numeric ? "num" : undefined} data-column={c.id} data-csv={c.csv(r.original)}>
                          {c.cell(r.original)}
                        </td>
                      ))}
                    </tr>
                  );
                })}
                {bottom > 0 ? (
                  <tr aria-hidden="true" className="history-spacer">
                    <td colSpan={columns.length} style={{ height: bottom }} />
                  </tr>
                ) : null}
              </>
            )}
          </tbody>
        </table>
      </div>
      {hasMore ? (
        <p className="history-more">
          <button type="button" className="button button--small" onClick={onMore} disabled={loadingMore} data-testid={`${testId}-more`}>
            {moreLabel}
          </button>
        </p>
      ) : null}
    </div>
  );
}
