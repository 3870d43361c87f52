import { Trans, useLingui } from "@lingui/react/macro";
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useId, useMemo, useState, type FormEvent } from "react";
import { Link, useSearchParams } from "react-router";
import { PageTitle } from "~/components/PageTitle";
import { SUBPAGE_KEYS } from "~/components/Nav";
import { preferencesSnapshot, rememberSubPage, usePreferencesStatus } from "~/features/dashboard/sync";
import { useExchanges } from "~/lib/exchanges";
import { useFormat } from "~/lib/format";
import { useMe } from "~/lib/session";
import { readStored } from "~/preferences";
import {
  EXPORT_MAX_PAGES,
  historyQueries,
  type Failure,
  type Filters,
  type HistoryFill,
  type HistoryFunding,
  type HistoryOrder,
  type ListKind,
  type Market,
  type Page,
  type SubTotal,
} from "./api";
import { download, toCsv } from "./csv";
import { HistoryTable, type HistoryColumn } from "./HistoryTable";
import "./history.css";

// /history: the spec's five sub-pages (spot_trading_overview,
// spot_trading_details, futures_trading_overview, futures_trading_details,
// funding_history) chosen by ?page= (the nav's History menu links), else the
// one opened last (this browser and the member's preferences). Overview: the
// realized PnL and equity, the sub-totals and the finished orders; details:
// every fill with fee and realized PnL; funding: funding fees of perpetual
// positions. Filters: exchange, symbol, side and date range. Every table
// exports what it holds as CSV.

export const SUB_PAGES = [
  "spot_trading_overview",
  "spot_trading_details",
  "futures_trading_overview",
  "futures_trading_details",
  "funding_history",
] as const;
export type SubPage = (typeof SUB_PAGES)[number];

export function isSubPage(v: unknown): v is SubPage {
  return typeof v === "string" && (SUB_PAGES as readonly string[]).includes(v);
}

export function chooseSubPage(param: string | null, remembered: string | null | undefined): SubPage {
  if (isSubPage(param)) return param;
  if (isSubPage(remembered)) return remembered;
  return "spot_trading_overview";
}

const DAY = 86_400_000;
export type RangeChoice = "1d" | "7d" | "30d" | "90d" | "custom";
const RANGE_DAYS: Record<Exclude<RangeChoice, "custom">, number> = { "1d": 1, "7d": 7, "30d": 30, "90d": 90 };

// A yyyy-mm-dd date input's value as local midnight (Unix ms), NaN when empty or invalid.
export function dateStart(v: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  return m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])).getTime() : Number.NaN;
}

function dateValue(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

// The window of a range choice: the last N days up to now (to 0: now), or whole local days for a custom range.
export function rangeOf(choice: RangeChoice, fromDate: string, toDate: string, now: number): { from: number; to: number } | null {
  if (choice !== "custom") return { from: now - RANGE_DAYS[choice] * DAY, to: 0 };
  const from = dateStart(fromDate);
  const to = dateStart(toDate);
  if (Number.isNaN(from) || Number.isNaN(to) || from > to) return null;
  return { from, to: to + DAY - 1 };
}

export function HistoryScreen() {
  const { t } = useLingui();
  const [params] = useSearchParams();
  const me = useMe();
  const status = usePreferencesStatus(me.status === "member" ? me.member.id : null);
  const remembered = preferencesSnapshot()?.sub_pages?.history ?? readStored(SUBPAGE_KEYS.history);
  const page = chooseSubPage(params.get("page"), remembered);
  const explicit = isSubPage(params.get("page"));
  const waiting =
    !explicit &&
    (me.status === "unknown" || me.status === "loading" || (me.status === "member" && (status === "none" || status === "loading")));
  const labels: Record<SubPage, string> = {
    spot_trading_overview: t`Spot trading overview`,
    spot_trading_details: t`Spot trading details`,
    futures_trading_overview: t`Futures trading overview`,
    futures_trading_details: t`Futures trading details`,
    funding_history: t`Funding history`,
  };
  useEffect(() => {
    if (!waiting && remembered !== page) rememberSubPage("history", page);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [page, waiting, status]);
  // On a narrow screen the tab strip scrolls: keep the open sub-page's tab in view.
  useEffect(() => {
    const tab = document.querySelector<HTMLElement>(`[data-testid="history-tab-${page}"]`);
    const strip = tab?.parentElement;
    if (tab && strip && strip.scrollWidth > strip.clientWidth) {
      strip.scrollLeft = tab.offsetLeft - strip.offsetLeft - (strip.clientWidth - tab.offsetWidth) / 2;
    }
  }, [page]);

  // The filters stay when switching sub-pages.
  const [filters, setFilters] = useState<Filters>(() => ({ ...rangeOf("7d", "", "", Date.now())! }));
  const market: Market = page.startsWith("futures") ? "futures" : "spot";
  return (
    <div className="page history-page" data-testid="history">
      <PageTitle page={`${t`History`} - ${labels[page]}`} />
      <h1>
        <Trans>History</Trans>
      </h1>
      <nav className="history-tabs" aria-label={t`History`}>
        {SUB_PAGES.map((p) => (
          <Link key={p} to={`/history?page=${p}`} aria-current={p === page ? "page" : undefined} data-testid={`history-tab-${p}`}>
            {labels[p]}
          </Link>
        ))}
      </nav>
      {waiting ? null : (
        <>
          <FilterBar value={filters} onChange={setFilters} sides={page !== "funding_history"} />
          {page === "spot_trading_overview" || page === "futures_trading_overview" ? <Overview market={market} filters={filters} /> : null}
          {page === "spot_trading_details" || page === "futures_trading_details" ? <Details market={market} filters={filters} /> : null}
          {page === "funding_history" ? <FundingHistory filters={filters} /> : null}
        </>
      )}
    </div>
  );
}

function FilterBar({ value, onChange, sides }: { value: Filters; onChange: (f: Filters) => void; sides: boolean }) {
  const { t } = useLingui();
  const id = useId();
  const exchanges = useExchanges();
  const [exchange, setExchange] = useState(value.exchange ?? "");
  const [symbol, setSymbol] = useState(value.symbol ?? "");
  const [side, setSide] = useState<string>(value.side ?? "");
  const [range, setRange] = useState<RangeChoice>("7d");
  const [fromDate, setFromDate] = useState(dateValue(Date.now() - 7 * DAY));
  const [toDate, setToDate] = useState(dateValue(Date.now()));
  const [invalid, setInvalid] = useState(false);
  const apply = (e?: FormEvent) => {
    e?.preventDefault();
    const w = rangeOf(range, fromDate, toDate, Date.now());
    setInvalid(w === null);
    if (!w) return;
    onChange({
      exchange: exchange || undefined,
      symbol: symbol.trim().toUpperCase() || undefined,
      side: side === "BUY" || side === "SELL" ? side : undefined,
      ...w,
    });
  };
  return (
    <form className="history-filters" onSubmit={apply} aria-label={t`Filters`} data-testid="history-filters">
      <label htmlFor={`${id}-ex`}>
        <span>{t`Exchange`}</span>
        <select id={`${id}-ex`} value={exchange} onChange={(e) => setExchange(e.target.value)} data-testid="filter-exchange">
          <option value="">{t`All exchanges`}</option>
          {(exchanges ?? [])
            .filter((x) => x.status !== "coming_soon")
            .map((x) => (
              <option key={x.slug} value={x.slug}>
                {x.name}
              </option>
            ))}
        </select>
      </label>
      <label htmlFor={`${id}-sym`}>
        <span>{t`Symbol`}</span>
        <input
          id={`${id}-sym`}
          value={symbol}
          onChange={(e) => setSymbol(e.target.value)}
          placeholder={t`All symbols`}
          autoComplete="off"
          spellCheck={false}
          maxLength={40}
          data-testid="filter-symbol"
        />
      </label>
      {sides ? (
        <label htmlFor={`${id}-side`}>
          <span>{t`Side`}</span>
          <select id={`${id}-side`} value={side} onChange={(e) => setSide(e.target.value)} data-testid="filter-side">
            <option value="">{t`Buy and sell`}</option>
            <option value="BUY">{t`Buy`}</option>
            <option value="SELL">{t`Sell`}</option>
          </select>
        </label>
      ) : null}
      <label htmlFor={`${id}-range`}>
        <span>{t`Date range`}</span>
        <select id={`${id}-range`} value={range} onChange={(e) => setRange(e.target.value as RangeChoice)} data-testid="filter-range">
          <option value="1d">{t`Last 24 hours`}</option>
          <option value="7d">{t`Last 7 days`}</option>
          <option value="30d">{t`Last 30 days`}</option>
          <option value="90d">{t`Last 90 days`}</option>
          <option value="custom">{t`Custom`}</option>
        </select>
      </label>
      {range === "custom" ? (
        <>
          <label htmlFor={`${id}-from`}>
            <span>{t`From`}</span>
            <input id={`${id}-from`} type="date" value={fromDate} onChange={(e) => setFromDate(e.target.value)} aria-invalid={invalid || undefined} data-testid="filter-from" />
          </label>
          <label htmlFor={`${id}-to`}>
            <span>{t`To`}</span>
            <input id={`${id}-to`} type="date" value={toDate} onChange={(e) => setToDate(e.target.value)} aria-invalid={invalid || undefined} data-testid="filter-to" />
          </label>
        </>
      ) : null}
      <button type="submit" className="button button--primary" data-testid="filter-apply">
        {t`Search`}
      </button>
      {invalid ? (
        <p className="history-error" role="alert">
          {t`Choose a start date on or before the end date.`}
        </p>
      ) : null}
    </form>
  );
}

// The exchanges' names by slug (the slug itself until the list arrives).
function useExchangeName(): (slug: string) => string {
  const exchanges = useExchanges();
  return useCallback((slug: string) => exchanges?.find((x) => x.slug === slug)?.name ?? slug, [exchanges]);
}

function Failures({ failed }: { failed: readonly Failure[] }) {
  const { t } = useLingui();
  const name = useExchangeName();
  if (failed.length === 0) return null;
  return (
    <ul className="history-failures" data-testid="history-failures">
      {failed.map((f) => (
        <li key={f.exchange} role="status">
          {f.code === "not_supported"
            ? t`${name(f.exchange)} does not report this history.`
            : t`The history of ${name(f.exchange)} could not be read right now.`}
        </li>
      ))}
    </ul>
  );
}

function time(s: string | undefined, locale: string): string {
  if (!s) return "—";
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? "—" : d.toLocaleString(locale, { hour12: false });
}

function iso(s: string | undefined): string {
  if (!s) return "";
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
}

function useSideText() {
  const { t } = useLingui();
  return (side?: string, positionSide?: string) => {
    const buy = side === "BUY";
    if (positionSide === "LONG") return buy ? t`Open long` : t`Close long`;
    if (positionSide === "SHORT") return buy ? t`Close short` : t`Open short`;
    return buy ? t`Buy` : side === "SELL" ? t`Sell` : side || "—";
  };
}

function useStatusText() {
  const { t } = useLingui();
  return (s: string) =>
    ({
      filled: t`Filled`,
      cancelled: t`Cancelled`,
      rejected: t`Rejected`,
      expired: t`Expired`,
    })[s] ?? s;
}

// One paged list of the history with its CSV export.
function useList<T>(kind: ListKind, market: Market, filters: Filters) {
  const q = useInfiniteQuery(historyQueries.list<T>(kind, market, filters));
  const rows = useMemo(() => q.data?.pages.flatMap((p) => p.rows) ?? [], [q.data]);
  const failed = useMemo(() => {
    const seen = new Map<string, Failure>();
    for (const p of q.data?.pages ?? []) for (const f of p.failed) seen.set(f.exchange, f);
    return [...seen.values()];
  }, [q.data]);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = q;
  const more = useCallback(() => {
    if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);
  return { q, rows, failed, more };
}

function ExportButton<T>({
  name,
  columns,
  list,
  testId,
}: {
  name: string;
  columns: readonly HistoryColumn<T>[];
  list: ReturnType<typeof useList<T>>;
  testId: string;
}) {
  const { t } = useLingui();
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState(false);
  const run = async () => {
    setBusy(true);
    setFailed(false);
    try {
      // Every page of the range first (bounded), so the file holds the whole history the filters choose.
      let data = list.q.data;
      while (data && data.pages.length < EXPORT_MAX_PAGES && data.pages[data.pages.length - 1]?.next) {
        const r = await list.q.fetchNextPage();
        if (r.isError) throw r.error;
        data = r.data;
      }
      const rows = (data?.pages ?? []).flatMap((p: Page<T>) => p.rows);
      download(`${name}.csv`, toCsv(columns.map((c) => c.header), rows.map((r) => columns.map((c) => c.csv(r)))));
    } catch {
      setFailed(true);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" className="button button--small" onClick={() => void run()} disabled={busy || !list.q.data} data-testid={testId}>
        {busy ? t`Exporting…` : t`Export CSV`}
      </button>
      {failed ? (
        <span className="history-error" role="alert">
          {t`The export failed. Try again.`}
        </span>
      ) : null}
    </>
  );
}

function ListState({ q, retry }: { q: { isError: boolean; isPending: boolean }; retry: () => void }) {
  if (q.isPending) {
    return (
      <p className="history-muted" role="status">
        <Trans>Loading…</Trans>
      </p>
    );
  }
  if (!q.isError) return null;
  return (
    <p className="history-error" role="alert">
      <Trans>Network anomaly</Trans>{" "}
      <button type="button" className="button button--small" onClick={retry}>
        <Trans>Retry</Trans>
      </button>
    </p>
  );
}

function useOrderColumns(): HistoryColumn<HistoryOrder>[] {
  const { t } = useLingui();
  const f = useFormat();
  const side = useSideText();
  const status = useStatusText();
  const name = useExchangeName();
  return useMemo(
    () => [
      { id: "time", header: t`Time`, cell: (o) => time(o.created_at, f.locale), csv: (o) => iso(o.created_at) },
      { id: "exchange", header: t`Exchange`, cell: (o) => name(o.exchange), csv: (o) => o.exchange },
      { id: "symbol", header: t`Symbol`, cell: (o) => o.symbol, csv: (o) => o.symbol },
      {
        id: "side",
        header: t`Side`,
        cell: (o) => <span className={o.side === "BUY" ? "up" : "down"}>{side(o.side, o.position_side)}</span>,
        csv: (o) => o.side ?? "",
      },
      { id: "type", header: t`Type`, cell: (o) => (o.type === "LIMIT" ? t`Limit` : o.type === "MARKET" ? t`Market` : o.type), csv: (o) => o.type },
      { id: "price", header: t`Price`, numeric: true, cell: (o) => f.decimal(o.price, 8), csv: (o) => o.price ?? "" },
      { id: "avg", header: t`Average price`, numeric: true, cell: (o) => f.decimal(o.avg_price, 8), csv: (o) => o.avg_price ?? "" },
      { id: "qty", header: t`Size`, numeric: true, cell: (o) => f.decimal(o.qty, 8), csv: (o) => o.qty ?? "" },
      { id: "filled", header: t`Filled`, numeric: true, cell: (o) => f.decimal(o.filled_qty ?? "0", 8), csv: (o) => o.filled_qty ?? "" },
      { id: "status", header: t`Status`, cell: (o) => <span data-status={o.status}>{status(o.status)}</span>, csv: (o) => o.status },
      { id: "source", header: t`Placed through`, cell: (o) => (o.source === "exhub" ? "exhub" : t`Exchange`), csv: (o) => o.source },
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, f, name],
  );
}

function useFillColumns(futures: boolean): HistoryColumn<HistoryFill>[] {
  const { t } = useLingui();
  const f = useFormat();
  const side = useSideText();
  const name = useExchangeName();
  return useMemo(() => {
    const cols: HistoryColumn<HistoryFill>[] = [
      { id: "time", header: t`Time`, cell: (x) => time(x.time, f.locale), csv: (x) => iso(x.time) },
      { id: "exchange", header: t`Exchange`, cell: (x) => name(x.exchange), csv: (x) => x.exchange },
      { id: "symbol", header: t`Symbol`, cell: (x) => x.symbol, csv: (x) => x.symbol },
      {
        id: "side",
        header: t`Side`,
        cell: (x) => <span className={x.side === "BUY" ? "up" : "down"}>{side(x.side, x.position_side)}</span>,
        csv: (x) => x.side,
      },
      { id: "price", header: t`Price`, numeric: true, cell: (x) => f.decimal(x.price, 8), csv: (x) => x.price },
      { id: "qty", header: t`Size`, numeric: true, cell: (x) => f.decimal(x.qty, 8), csv: (x) => x.qty },
      { id: "value", header: t`Value`, numeric: true, cell: (x) => f.decimal(x.quote_qty, 8), csv: (x) => x.quote_qty ?? "" },
      { id: "fee", header: t`Fee`, numeric: true, cell: (x) => f.decimal(x.fee, 8), csv: (x) => x.fee ?? "" },
      { id: "fee_asset", header: t`Fee asset`, cell: (x) => x.fee_asset ?? "—", csv: (x) => x.fee_asset ?? "" },
    ];
    if (futures) {
      cols.push({ id: "pnl", header: t`Realized PnL`, numeric: true, cell: (x) => <Signed value={x.realized_pnl} />, csv: (x) => x.realized_pnl ?? "" });
    }
    cols.push({ id: "role", header: t`Role`, cell: (x) => (x.maker ? t`Maker` : t`Taker`), csv: (x) => (x.maker ? "maker" : "taker") });
    return cols;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [t, f, name, futures]);
}

function Signed({ value }: { value?: string }) {
  const f = useFormat();
  const v = value?.trim() ?? "";
  const cls = v === "" || /^-?0*(\.0*)?$/.test(v.replace(/^[+-]/, "")) ? undefined : v.startsWith("-") ? "down" : "up";
  return <span className={cls}>{f.decimal(v || undefined, 8)}</span>;
}

function Overview({ market, filters }: { market: Market; filters: Filters }) {
  const { t } = useLingui();
  const list = useList<HistoryOrder>("orders", market, filters);
  const columns = useOrderColumns();
  return (
    <>
      <PnlSummary market={market} filters={filters} />
      <SubTotals market={market} filters={filters} />
      <section className="history-section" aria-labelledby="history-orders-title">
        <div className="history-section-head">
          <h2 id="history-orders-title">{market === "spot" ? t`Spot order history` : t`Futures order history`}</h2>
          <ExportButton name={`${market}-orders`} columns={columns} list={list} testId="export-orders" />
        </div>
        <Failures failed={list.failed} />
        <ListState q={list.q} retry={() => void list.q.refetch()} />
        {list.q.isSuccess ? (
          <HistoryTable
            label={t`Order history`}
            rows={list.rows}
            columns={columns}
            rowId={(o, i) => `${o.exchange}|${o.exchange_order_id ?? o.id ?? i}`}
            empty={t`No orders in this range.`}
            testId="history-orders-table"
            hasMore={list.q.hasNextPage}
            loadingMore={list.q.isFetchingNextPage}
            onMore={list.more}
            moreLabel={t`Load more`}
          />
        ) : null}
      </section>
    </>
  );
}

function Details({ market, filters }: { market: Market; filters: Filters }) {
  const { t } = useLingui();
  const list = useList<HistoryFill>("fills", market, filters);
  const columns = useFillColumns(market === "futures");
  return (
    <>
      <SubTotals market={market} filters={filters} compact />
      <section className="history-section" aria-labelledby="history-fills-title">
        <div className="history-section-head">
          <h2 id="history-fills-title">{t`Trade details`}</h2>
          <ExportButton name={`${market}-trades`} columns={columns} list={list} testId="export-fills" />
        </div>
        <Failures failed={list.failed} />
        <ListState q={list.q} retry={() => void list.q.refetch()} />
        {list.q.isSuccess ? (
          <HistoryTable
            label={t`Trade details`}
            rows={list.rows}
            columns={columns}
            rowId={(x) => `${x.exchange}|${x.trade_id}|${x.order_id}`}
            empty={t`No trades in this range.`}
            testId="history-fills-table"
            hasMore={list.q.hasNextPage}
            loadingMore={list.q.isFetchingNextPage}
            onMore={list.more}
            moreLabel={t`Load more`}
          />
        ) : null}
      </section>
    </>
  );
}

function FundingHistory({ filters }: { filters: Filters }) {
  const { t } = useLingui();
  const f = useFormat();
  const name = useExchangeName();
  const list = useList<HistoryFunding>("funding", "futures", filters);
  const columns = useMemo<HistoryColumn<HistoryFunding>[]>(
    () => [
      { id: "time", header: t`Time`, cell: (x) => time(x.time, f.locale), csv: (x) => iso(x.time) },
      { id: "exchange", header: t`Exchange`, cell: (x) => name(x.exchange), csv: (x) => x.exchange },
      { id: "symbol", header: t`Symbol`, cell: (x) => x.symbol, csv: (x) => x.symbol },
      { id: "amount", header: t`Amount`, numeric: true, cell: (x) => <Signed value={x.amount} />, csv: (x) => x.amount },
      { id: "asset", header: t`Asset`, cell: (x) => x.asset, csv: (x) => x.asset },
      { id: "rate", header: t`Funding rate`, numeric: true, cell: (x) => (x.funding_rate ? f.percent(x.funding_rate) : "—"), csv: (x) => x.funding_rate ?? "" },
      { id: "size", header: t`Position size`, numeric: true, cell: (x) => f.decimal(x.position_size, 8), csv: (x) => x.position_size ?? "" },
    ],
    [t, f, name],
  );
  return (
    <>
      <PnlSummary market="futures" filters={filters} />
      <section className="history-section" aria-labelledby="history-funding-title">
        <div className="history-section-head">
          <h2 id="history-funding-title">{t`Funding history`}</h2>
          <ExportButton name="funding" columns={columns} list={list} testId="export-funding" />
        </div>
        <Failures failed={list.failed} />
        <ListState q={list.q} retry={() => void list.q.refetch()} />
        {list.q.isSuccess ? (
          <HistoryTable
            label={t`Funding history`}
            rows={list.rows}
            columns={columns}
            rowId={(x) => `${x.exchange}|${x.id}`}
            empty={t`No funding payments in this range.`}
            testId="history-funding-table"
            hasMore={list.q.hasNextPage}
            loadingMore={list.q.isFetchingNextPage}
            onMore={list.more}
            moreLabel={t`Load more`}
          />
        ) : null}
      </section>
    </>
  );
}

// The realized PnL of the range and the current equity (the spec's GetRpnl).
function PnlSummary({ market, filters }: { market: Market; filters: Filters }) {
  const { t } = useLingui();
  const f = useFormat();
  const name = useExchangeName();
  const q = useQuery(historyQueries.rpnl(filters));
  const d = q.data;
  return (
    <section className="history-summary" aria-label={t`Realized PnL`} data-testid="history-pnl">
      {q.isPending ? (
        <p className="history-muted" role="status">
          <Trans>Loading…</Trans>
        </p>
      ) : null}
      {q.isError ? (
        <p className="history-error" role="alert">
          <Trans>Network anomaly</Trans>{" "}
          <button type="button" className="button button--small" onClick={() => void q.refetch()}>
            <Trans>Retry</Trans>
          </button>
        </p>
      ) : null}
      {d ? (
        <>
          <dl className="history-figures">
            {market === "futures" ? (
              <div>
                <dt>{t`Realized PnL`}</dt>
                <dd data-testid="pnl-total">
                  <Signed value={d.total_rpnl} /> USDT
                </dd>
              </div>
            ) : null}
            <div>
              <dt>{t`Equity`}</dt>
              <dd data-testid="pnl-equity">{f.decimal(d.equity, 2, 2)} USDT</dd>
            </div>
          </dl>
          {d.exchanges.length > 0 ? (
            <ul className="history-per-exchange">
              {d.exchanges.map((x) => (
                <li key={x.exchange} data-exchange={x.exchange}>
                  <strong>{name(x.exchange)}</strong>
                  {market === "futures" ? (
                    <span>
                      {t`Realized PnL`}: <Signed value={x.realized_pnl} />
                    </span>
                  ) : null}
                  {market === "futures" ? (
                    <span>
                      {t`Funding`}: {x.funding_missing ? t`not reported` : <Signed value={x.funding} />}
                    </span>
                  ) : null}
                  <span>
                    {t`Equity`}: {f.decimal(x.equity, 2, 2)}
                  </span>
                </li>
              ))}
            </ul>
          ) : null}
          <Failures failed={d.failed} />
        </>
      ) : null}
    </section>
  );
}

function feeText(fees: SubTotal["fees"], f: ReturnType<typeof useFormat>): string {
  return fees.length === 0 ? "—" : fees.map((x) => `${f.decimal(x.amount, 8)} ${x.asset}`).join(", ");
}

// The spec's OrderHistorySubTotal of the range: overall, and per symbol unless compact.
function SubTotals({ market, filters, compact }: { market: Market; filters: Filters; compact?: boolean }) {
  const { t } = useLingui();
  const f = useFormat();
  const name = useExchangeName();
  const q = useQuery(historyQueries.subtotal(market, filters));
  const d = q.data;
  if (!d) return null;
  const tot = d.total;
  return (
    <section className="history-section" aria-labelledby={`history-subtotal-${market}`} data-testid="history-subtotal">
      <h2 id={`history-subtotal-${market}`}>{t`Sub-totals`}</h2>
      <dl className="history-figures">
        <div>
          <dt>{t`Trades`}</dt>
          <dd data-testid="subtotal-trades">{tot.trades}</dd>
        </div>
        <div>
          <dt>{t`Orders filled`}</dt>
          <dd data-testid="subtotal-orders">{tot.orders}</dd>
        </div>
        <div>
          <dt>{t`Buys / sells`}</dt>
          <dd>
            {tot.buys} / {tot.sells}
          </dd>
        </div>
        <div>
          <dt>{t`Volume (USDT)`}</dt>
          <dd data-testid="subtotal-quote">{f.decimal(tot.quote_volume, 2, 2)}</dd>
        </div>
        <div>
          <dt>{t`Fees`}</dt>
          <dd data-testid="subtotal-fees">{feeText(tot.fees, f)}</dd>
        </div>
        {market === "futures" ? (
          <div>
            <dt>{t`Realized PnL`}</dt>
            <dd data-testid="subtotal-pnl">
              <Signed value={tot.realized_pnl} />
            </dd>
          </div>
        ) : null}
      </dl>
      {d.truncated ? <p className="history-muted">{t`The range holds more trades than are summed here: narrow it for exact totals.`}</p> : null}
      {!compact && d.symbols.length > 0 ? (
        <div className="history-table-scroll history-table-scroll--short" role="region" aria-label={t`Sub-totals per symbol`} tabIndex={0}>
          <table className="history-table" data-testid="history-subtotal-table">
            <thead>
              <tr>
                <th scope="col">{t`Exchange`}</th>
                <th scope="col">{t`Symbol`}</th>
                <th scope="col" className="num">{t`Trades`}</th>
                <th scope="col" className="num">{t`Volume`}</th>
                <th scope="col" className="num">{t`Volume (USDT)`}</th>
                <th scope="col" className="num">{t`Fees`}</th>
                {market === "futures" ? <th scope="col" className="num">{t`Realized PnL`}</th> : null}
              </tr>
            </thead>
            <tbody>
              {d.symbols.map((s) => (
                <tr key={`${s.exchange}|${s.symbol}`} data-row={`${s.exchange}|${s.symbol}`}>
                  <td>{name(s.exchange ?? "")}</td>
                  <td>{s.symbol}</td>
                  <td className="num">{s.trades}</td>
                  <td className="num">{f.decimal(s.volume, 8)}</td>
                  <td className="num">{f.decimal(s.quote_volume, 2, 2)}</td>
                  <td className="num">{feeText(s.fees, f)}</td>
                  {market === "futures" ? (
                    <td className="num">
                      <Signed value={s.realized_pnl} />
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
