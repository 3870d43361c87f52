import { Trans, useLingui } from "@lingui/react/macro";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { createColumnHelper, createSortedRowModel, rowSortingFeature, tableFeatures, useTable, type SortingState } from "@tanstack/react-table";
import { useId, useMemo, useState, type ReactNode } from "react";
import type { Exchange } from "~/api/client";
import { displayState } from "~/api/exchange-state";
import { copyText } from "~/features/dashboard/copy";
import { showToast } from "~/features/auth/toast";
import { errorText } from "~/lib/errors";
import { useExchanges } from "~/lib/exchanges";
import { formatDecimal } from "~/lib/format";
import { walletApi, walletKeys, walletQueries, type CoinKind, type HistoryFilter, type HistoryKind, type TransferStatus } from "./api";
import { orderCoins } from "./wallet-math";

// What the wallet's sub-pages share: pickers, copy button, status badge and the history tables.

const features = tableFeatures({ rowSortingFeature, sortedRowModel: createSortedRowModel() });

export type Column<T> = {
  id: string;
  header: string;
  cell: (row: T) => ReactNode;
  sort?: (a: T, b: T) => number;
  numeric?: boolean;
};

// A sortable table (TanStack Table) in a scrolling region, so it fits a phone.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function WalletTable<T extends Record<string, any>>({
  label,
  rows,
  columns,
  rowId,
  empty,
  testId,
}: {
  label: string;
  rows: readonly T[];
  columns: readonly Column<T>[];
  rowId: (row: T, index: number) => string;
  empty: string;
  testId?: string;
}) {
  const [sorting, setSorting] = useState<SortingState>([]);
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
    <div className="wallet-table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table className="wallet-table" data-testid={testId}>
        <thead>
          <tr>
            {headers.map((h) => {
              const c = byId.get(h.id)!;
              const dir = h.column.getIsSorted();
              return (
                <th
                  key={h.id}
                  scope="col"
                  className={c.numeric ? "num" : undefined}
                  aria-sort={dir === "asc" ? "ascending" : dir === "desc" ? "descending" : undefined}
                >
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
              <td colSpan={columns.length} className="wallet-table-empty">
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

// The exchanges a member can use (not coming soon), as the shell lists them.
export function useWalletExchanges(): Exchange[] | null {
  const all = useExchanges();
  return useMemo(() => (all ? all.filter((e) => displayState(e) !== "coming_soon") : null), [all]);
}

export function exchangeName(exchanges: Exchange[] | null, slug: string): string {
  return exchanges?.find((e) => e.slug === slug)?.name ?? slug;
}

type SelectProps = {
  label: ReactNode;
  value: string;
  onChange: (v: string) => void;
  testId?: string;
  disabled?: boolean;
};

// A labelled native select (keyboard and screen readers for free).
export function Select({ label, value, onChange, testId, disabled, children }: SelectProps & { children: ReactNode }) {
  const id = useId();
  return (
    <div className="field wallet-field">
      <label htmlFor={id} className="field-label">
        {label}
      </label>
      <select id={id} className="input" value={value} onChange={(e) => onChange(e.target.value)} data-testid={testId} disabled={disabled}>
        {children}
      </select>
    </div>
  );
}

export function ExchangeSelect({ exchanges, ...p }: SelectProps & { exchanges: Exchange[] | null }) {
  const { t } = useLingui();
  return (
    <Select {...p} label={p.label ?? t`Exchange`}>
      {(exchanges ?? []).map((e) => (
        <option key={e.slug} value={e.slug}>
          {e.name}
        </option>
      ))}
    </Select>
  );
}

// A coin picker: the member's recent coins of this kind first (the coin history), then the others by name.
export function CoinSelect({ coins, kind, ...p }: SelectProps & { coins: string[]; kind: CoinKind }) {
  const { t } = useLingui();
  const recent = useQuery(walletQueries.coins(kind)).data ?? [];
  const ordered = orderCoins(coins, recent);
  const head = ordered.filter((c) => recent.includes(c));
  const rest = ordered.filter((c) => !recent.includes(c));
  return (
    <Select {...p}>
      {p.value === "" ? <option value="">{t`Choose a coin`}</option> : null}
      {head.length > 0 ? (
        <optgroup label={t`Recently used`}>
          {head.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </optgroup>
      ) : null}
      <optgroup label={t`All coins`}>
        {rest.map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </optgroup>
    </Select>
  );
}

// Remembers a coin the member picked for a kind (best effort: the picker works without it).
export function rememberCoin(kind: CoinKind, coin: string, onDone?: (coins: string[]) => void): void {
  if (!coin) return;
  void walletApi
    .recordCoin(kind, coin)
    .then((coins) => onDone?.(coins))
    .catch(() => undefined);
}

export function CopyButton({ text, label, testId }: { text: string; label: string; testId?: string }) {
  const { t } = useLingui();
  return (
    <button
      type="button"
      className="button wallet-copy"
      aria-label={label}
      data-testid={testId}
      onClick={() =>
        void copyText(text).then((ok) => showToast(ok ? t`Copy Successful` : t`Copy failed`, ok ? "success" : "error"))
      }
    >
      <Trans>Copy</Trans>
    </button>
  );
}

export function StatusBadge({ status }: { status: TransferStatus | string }) {
  const { t } = useLingui();
  const labels: Record<string, string> = {
    pending: t`Pending`,
    success: t`Completed`,
    failed: t`Failed`,
    unknown: t`Pending`,
  };
  const cls: Record<string, string> = { pending: "in_review", success: "ok", failed: "declined", unknown: "in_review" };
  return <span className={`dash-badge dash-badge--${cls[status] ?? "in_review"}`}>{labels[status] ?? status}</span>;
}

export function useFormatTime(): (ms: number) => string {
  const { i18n } = useLingui();
  return useMemo(() => {
    const f = new Intl.DateTimeFormat(i18n.locale, { dateStyle: "short", timeStyle: "medium" });
    return (ms: number) => (ms > 0 ? f.format(new Date(ms)) : "—");
  }, [i18n.locale]);
}

export function useAmount(): (s: string | undefined) => string {
  const { i18n } = useLingui();
  return (s) => formatDecimal(s, i18n.locale, 8);
}

// "YYYY-MM-DD" of a date input to Unix ms at the start (or end) of that day in the viewer's time zone.
export function dayBound(day: string, end: boolean): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (end) d.setDate(d.getDate() + 1);
  return end ? d.getTime() - 1 : d.getTime();
}

// An exchange's history of one kind: a coin and date filter, the table, and older pages by cursor.
export function HistorySection<T extends { id: string }>({
  title,
  kind,
  exchange,
  columns,
  coins,
  testId,
}: {
  title: string;
  kind: HistoryKind;
  exchange: string;
  columns: readonly Column<T>[];
  coins: string[];
  testId: string;
}) {
  const { t } = useLingui();
  const [coin, setCoin] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const fromId = useId();
  const toId = useId();
  const filter: HistoryFilter = { exchange, coin: coin || undefined, start: dayBound(from, false), end: dayBound(to, true), limit: 20 };
  const q = useInfiniteQuery({
    queryKey: walletKeys.history(kind, filter),
    queryFn: ({ pageParam, signal }) => walletApi.history<T>(kind, filter, pageParam || undefined, signal),
    initialPageParam: "",
    getNextPageParam: (last) => last.next_cursor || undefined,
    enabled: exchange !== "",
  });
  const rows = useMemo(() => q.data?.pages.flatMap((p) => p.items) ?? [], [q.data]);
  return (
    <section className="dash-card wallet-history" aria-label={title} data-testid={testId}>
      <h2>{title}</h2>
      <div className="wallet-filters">
        <Select label={t`Coin`} value={coin} onChange={setCoin} testId={`${testId}-coin`}>
          <option value="">{t`All coins`}</option>
          {coins.map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </Select>
        <div className="field wallet-field">
          <label htmlFor={fromId} className="field-label">
            <Trans>From</Trans>
          </label>
          <input id={fromId} className="input" type="date" value={from} max={to || undefined} onChange={(e) => setFrom(e.target.value)} />
        </div>
        <div className="field wallet-field">
          <label htmlFor={toId} className="field-label">
            <Trans>To</Trans>
          </label>
          <input id={toId} className="input" type="date" value={to} min={from || undefined} onChange={(e) => setTo(e.target.value)} />
        </div>
      </div>
      {q.isError ? (
        <p className="wallet-error" role="alert">
          {errorText(q.error, t`Network anomaly`)}{" "}
          <button type="button" className="button" onClick={() => void q.refetch()}>
            <Trans>Retry</Trans>
          </button>
        </p>
      ) : null}
      {q.isPending && exchange !== "" ? (
        <p className="auth-hint" aria-busy="true">
          <Trans>Loading…</Trans>
        </p>
      ) : (
        <WalletTable label={title} rows={rows} columns={columns} rowId={(r) => r.id} empty={t`No records yet.`} testId={`${testId}-table`} />
      )}
      {q.hasNextPage ? (
        <button type="button" className="button wallet-more" disabled={q.isFetchingNextPage} onClick={() => void q.fetchNextPage()}>
          <Trans>Load more</Trans>
        </button>
      ) : null}
    </section>
  );
}
