import { useLingui } from "@lingui/react/macro";
import {
  createColumnHelper,
  createSortedRowModel,
  rowSortingFeature,
  tableFeatures,
  useTable,
  type SortingState,
} from "@tanstack/react-table";
import { useMemo, useState } from "react";
import { compareDecimals } from "~/lib/decimal";
import type { Row } from "./data";

const features = tableFeatures({
  rowSortingFeature,
  sortedRowModel: createSortedRowModel(),
});

const col = createColumnHelper<typeof features, Row>();

export type TableColumn = {
  id: string;
  header: string;
  // Formats the API's decimal string for display.
  format: (s: string) => string;
};

// The same rows as the chart, as a table sortable on every column (time
// newest first by default). Decimals sort exactly, as strings.
export function DataTable({
  label,
  rows,
  columns,
  formatTime,
}: {
  label: string;
  rows: readonly Row[];
  columns: readonly TableColumn[];
  formatTime: (ms: number) => string;
}) {
  const { t } = useLingui();
  const [sorting, setSorting] = useState<SortingState>([{ id: "time", desc: true }]);
  const defs = useMemo(
    () =>
      col.columns([
        col.accessor((r) => String(r.time), {
          id: "time",
          header: () => t`Time`,
          sortFn: (a, b) => a.original.time - b.original.time,
          sortDescFirst: true,
        }),
        ...columns.map((c) =>
          col.accessor((r) => r.values[c.id] ?? "", {
            id: c.id,
            header: () => c.header,
            sortFn: (a, b) => compareDecimals(a.original.values[c.id] ?? "", b.original.values[c.id] ?? ""),
            sortDescFirst: true,
          }),
        ),
      ]),
    [columns, t],
  );
  const data = useMemo(() => [...rows], [rows]);
  const table = useTable(
    { features, columns: defs, data, state: { sorting }, onSortingChange: setSorting, getRowId: (r) => String(r.time) },
    (s) => s,
  );
  const headers = table.getHeaderGroups()[0]?.headers ?? [];
  const byId = new Map(columns.map((c) => [c.id, c]));
  return (
    <div className="md-table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table className="md-table" data-testid="md-table">
        <thead>
          <tr>
            {headers.map((h) => {
              const dir = h.column.getIsSorted();
              const head = h.column.columnDef.header;
              const text = typeof head === "function" ? (head as () => string)() : String(head ?? h.id);
              return (
                <th
                  key={h.id}
                  scope="col"
                  aria-sort={dir === "asc" ? "ascending" : dir === "desc" ? "descending" : "none"}
                >
                  <button
                    type="button"
                    className="sort-button"
                    onClick={h.column.getToggleSortingHandler()}
                    data-column={h.id}
                  >
                    {text}
                    <span className="sort-mark" aria-hidden="true">
                      {dir === "asc" ? "▲" : dir === "desc" ? "▼" : ""}
                    </span>
                  </button>
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {table.getRowModel().rows.map((r) => (
            <tr key={r.id} data-time={r.original.time}>
              <th scope="row">{formatTime(r.original.time)}</th>
              {columns.map((c) => (
                <td key={c.id} className="num" data-column={c.id}>
                  {byId.get(c.id)!.format(r.original.values[c.id] ?? "")}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
