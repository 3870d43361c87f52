import { createColumnHelper, createSortedRowModel, rowSortingFeature, tableFeatures, useTable, type SortingState } from "@tanstack/react-table";
import { useMemo, useState, type ReactNode } from "react";

// A sortable table of the account tabs (TanStack Table, like the other tables
// of the app): columns give their header, a sort function when they sort,
// and how a row's cell is drawn.

const features = tableFeatures({ rowSortingFeature, sortedRowModel: createSortedRowModel() });

export type TradeColumn<T> = {
  id: string;
  header: string;
  cell: (row: T) => ReactNode;
  sort?: (a: T, b: T) => number;
  numeric?: boolean;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function TradeTable<T extends Record<string, any>>({
  label,
  rows,
  columns,
  rowId,
  empty,
  testId,
  initialSort,
}: {
  label: string;
  rows: readonly T[];
  columns: readonly TradeColumn<T>[];
  rowId: (row: T, index: number) => string;
  empty: string;
  testId?: string;
  initialSort?: SortingState;
}) {
  const [sorting, setSorting] = useState<SortingState>(initialSort ?? []);
  const col = useMemo(() => createColumnHelper<typeof features, T>(), []);
  const defs = useMemo(
    () =>
      col.columns(
        columns.map((c) =>
          col.display({
            id: c.id,
            header: () => c.header,
            enableSorting: c.sort !== undefined,
            sortFn: c.sort ? (a, b) => c.sort!(a.original, b.original) : undefined,
          }),
        ),
      ),
    [col, columns],
  );
  const data = useMemo(() => [...rows], [rows]);
  const table = useTable(
    { features, columns: defs, data, state: { sorting }, onSortingChange: setSorting, getRowId: (r, i) => rowId(r, i) },
    (s) => s,
  );
  const byId = new Map(columns.map((c) => [c.id, c]));
  const headers = table.getHeaderGroups()[0]?.headers ?? [];
  return (
    <div className="trade-table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table className="trade-table" data-testid={testId}>
        <thead>
          <tr>
            {headers.map((h) => {
              const c = byId.get(h.id)!;
              const dir = h.column.getIsSorted();
              return (
                <th key={h.id} scope="col" className={c.numeric ? "num" : undefined} aria-sort={dir === "asc" ? "ascending" : dir === "desc" ? "descending" : undefined}>
                  {c.sort ? (
                    <button type="button" className="sort-button" onClick={h.column.getToggleSortingHandler()}>
                      {c.header}
                      <span className="sort-mark" aria-hidden="true">
                        {dir === "asc" ? "▲" : dir === "desc" ? "▼" : ""}
                      </span>
                    </button>
                  ) : (
                    c.header
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} className="trade-table-empty">
                {empty}
              </td>
            </tr>
          ) : (
            table.getRowModel().rows.map((r) => (
              <tr key={r.id} data-row={r.id}>
                {columns.map((c) => (
                  <td key={c.id} className={c.numeric ? "num" : undefined} data-column={c.id}>
                    {c.cell(r.original)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
