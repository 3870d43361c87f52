import { useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useRef, useState } from "react";
import { Tab, TabList, TabPanel, Tabs } from "react-aria-components";
import { queryClient } from "~/api/queries";
import {
  newIdempotencyKey,
  TRADING_KEY,
  TRADING_POLL_MS,
  tradingApi,
  tradingQueries,
  type Fill,
  type MarketType,
  type Order,
  type Position,
  type Scope,
} from "~/api/trading";
import { compareDecimals, dec, isDecimal } from "~/lib/decimal";
import { ApiError } from "~/lib/errors";
import { useFormat } from "~/lib/format";
import type { Instrument } from "./api";
import { codeText, outcome } from "./messages";
import { checkOrderRules, marginRatioRisky, ratioPercent, roiPercent, roundToStep } from "./order-math";
import PositionTpSl, { isLong } from "./PositionTpSl";
import { pushToast } from "./toasts";
import { useTradeLayout } from "./trade-layout";
import { TradeTable, type TradeColumn } from "./TradeTable";

// The tabs under the chart: Positions, Open orders (with conditional orders
// beside them), Order history and Trade history, for the current symbol or
// all symbols. Rows come from the REST API, re-read when the private stream
// reports a change (account-stream.ts), and every TRADING_POLL_MS while the
// stream is not live.

type Props = {
  exchange: string;
  marketType: MarketType;
  instrument: Instrument;
  streamLive: boolean;
  // The exchange's trigger price types (LAST, MARK, INDEX) for a position's TP/SL.
  triggerTypes?: string[];
};

function time(s: string | undefined, locale: string): string {
  if (!s) return "—";
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? "—" : d.toLocaleString(locale, { hour12: false });
}

function byTime(a?: string, b?: string): number {
  return (a ? Date.parse(a) : 0) - (b ? Date.parse(b) : 0);
}

export function AccountTabs(p: Props) {
  const { t } = useLingui();
  // The "all symbols" switches are part of the saved trade layout.
  const [layout, changeLayout] = useTradeLayout();
  const all = { positions: layout.positionsAll, orders: layout.openOrdersAll };
  const [tab, setTab] = useState<string>(p.marketType === "SWAP" ? "positions" : "open");
  const toggle = (which: "positions" | "orders", on: boolean) =>
    changeLayout(which === "positions" ? { positionsAll: on } : { openOrdersAll: on });
  const which = tab === "positions" ? "positions" : "orders";
  const allOn = all[which];
  const scope: Scope = { exchange: p.exchange, market_type: p.marketType, symbol: allOn ? undefined : p.instrument.symbol };
  const poll = p.streamLive ? false : TRADING_POLL_MS;
  const swap = p.marketType === "SWAP";
  return (
    <section className="trade-panel trade-account" aria-label={t`Your orders and positions`} data-testid="account-tabs">
      <Tabs selectedKey={tab} onSelectionChange={(k) => setTab(String(k))}>
        <div className="trade-account-head">
          <TabList aria-label={t`Your orders and positions`} className="trade-tabs">
            {swap ? <Tab id="positions">{t`Positions`}</Tab> : null}
            <Tab id="open">{t`Open orders`}</Tab>
            <Tab id="history">{t`Order history`}</Tab>
            <Tab id="fills">{t`Trade history`}</Tab>
          </TabList>
          <label className="trade-all">
            <input type="checkbox" checked={allOn} onChange={(e) => toggle(which, e.target.checked)} data-testid="all-symbols" />
            {t`All symbols`}
          </label>
        </div>
        {swap ? (
          <TabPanel id="positions">
            <Positions exchange={p.exchange} symbol={scope.symbol} poll={poll} instrument={p.instrument} triggerTypes={p.triggerTypes ?? []} />
          </TabPanel>
        ) : null}
        <TabPanel id="open">
          <OpenOrders scope={scope} instrument={p.instrument} poll={poll} />
        </TabPanel>
        <TabPanel id="history">
          <OrderHistory scope={scope} />
        </TabPanel>
        <TabPanel id="fills">
          <Fills scope={scope} />
        </TabPanel>
      </Tabs>
    </section>
  );
}

function sideText(t: (s: TemplateStringsArray) => string, side?: string, positionSide?: string): string {
  const buy = side === "BUY";
  if (positionSide === "LONG") return buy ? t`Open long` : t`Close long`;
  if (positionSide === "SHORT") return buy ? t`Close short` : t`Open short`;
  return buy ? t`Buy` : side === "SELL" ? t`Sell` : side || "—";
}

function useStatusText() {
  const { t } = useLingui();
  return (s: string) =>
    ({
      pending: t`Pending`,
      open: t({ message: "Open", context: "order status" }),
      partially_filled: t`Partially filled`,
      filled: t`Filled`,
      cancelled: t`Cancelled`,
      rejected: t`Rejected`,
      expired: t`Expired`,
      not_placed: t`Not placed`,
      waiting: t`Waiting`,
      triggered: t`Triggered`,
      failed: t`Failed`,
    })[s] ?? s;
}

function failure(e: unknown, fallback: string, i18n: Parameters<typeof codeText>[0]): string {
  if (e instanceof ApiError) return codeText(i18n, e.code) ?? e.problem.detail ?? e.problem.title;
  return fallback;
}

function Positions({
  exchange,
  symbol,
  poll,
  instrument,
  triggerTypes,
}: {
  exchange: string;
  symbol?: string;
  poll: number | false;
  instrument: Instrument;
  triggerTypes: string[];
}) {
  const [tpsl, setTpsl] = useState<Position | null>(null);
  const { t, i18n } = useLingui();
  const f = useFormat();
  const q = useQuery({ ...tradingQueries.positions(exchange, symbol), refetchInterval: poll }, queryClient);
  const rows = (q.data ?? []).filter((x) => isDecimal(x.qty) && !dec(x.qty).eq(0));
  const [busy, setBusy] = useState<Set<string>>(new Set());
  const rowKey = (x: Position) => `${x.symbol}|${x.position_side}`;
  // Closes under way, synchronously: a double click sends one close.
  const closing = useRef(new Set<string>());
  const close = async (x: Position) => {
    const k = rowKey(x);
    if (closing.current.has(k)) return;
    closing.current.add(k);
    setBusy((s) => new Set(s).add(k));
    try {
      const r = await tradingApi.closePosition(
        { exchange, symbol: x.symbol, position_side: x.position_side, margin_mode: x.margin_mode === "ISOLATED" ? "ISOLATED" : x.margin_mode === "CROSS" ? "CROSS" : undefined },
        newIdempotencyKey(),
      );
      pushToast(r.httpStatus === 202 ? { kind: "info", text: i18n._(outcome.pending) } : { kind: "success", text: i18n._(outcome.placed) });
    } catch (e) {
      pushToast({ kind: "error", text: i18n._(outcome.failed), detail: failure(e, t`Network anomaly`, i18n) });
    } finally {
      closing.current.delete(k);
      setBusy((s) => {
        const n = new Set(s);
        n.delete(k);
        return n;
      });
      void queryClient.invalidateQueries({ queryKey: TRADING_KEY });
    }
  };
  // Close at a limit price: an inline price, then a reduce-only limit order (hedge mode: on the position's side).
  const [limits, setLimits] = useState<Record<string, { price: string; key: string; error?: string }>>({});
  const startLimit = (x: Position) =>
    setLimits((m) => ({
      ...m,
      [rowKey(x)]: {
        price: x.mark_price && x.symbol === instrument.symbol ? roundToStep(x.mark_price, instrument.tickSize, "nearest") : (x.mark_price ?? ""),
        key: newIdempotencyKey(),
      },
    }));
  const stopLimit = (x: Position) =>
    setLimits((m) => {
      const n = { ...m };
      delete n[rowKey(x)];
      return n;
    });
  const closeAtLimit = async (x: Position) => {
    const k = rowKey(x);
    const e = limits[k];
    if (!e || closing.current.has(k)) return;
    const price = e.price.trim();
    const qty = dec(x.qty).abs().toFixed();
    const issues = x.symbol === instrument.symbol ? checkOrderRules(instrument, { type: "LIMIT", price, qty }).filter((i) => i.field === "price") : [];
    if (!isDecimal(price) || !dec(price).gt(0) || issues.length > 0) {
      const text = issues[0]?.code === "price.tick" ? t`The price must be a multiple of ${instrument.tickSize}.` : t`Enter a price.`;
      setLimits((m) => ({ ...m, [k]: { ...e, error: text } }));
      return;
    }
    const long = isLong(x);
    closing.current.add(k);
    try {
      const r = await tradingApi.placeOrder(
        {
          exchange,
          market_type: "SWAP",
          symbol: x.symbol,
          side: long ? "SELL" : "BUY",
          type: "LIMIT",
          time_in_force: "GTC",
          price,
          qty,
          reduce_only: x.position_side === "NET" ? true : undefined,
          position_side: x.position_side === "NET" ? undefined : x.position_side,
        },
        e.key,
      );
      pushToast(r.httpStatus === 202 ? { kind: "info", text: i18n._(outcome.pending) } : { kind: "success", text: i18n._(outcome.placed) });
      stopLimit(x);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) setLimits((m) => ({ ...m, [k]: { ...e, key: newIdempotencyKey(), error: failure(err, t`Network anomaly`, i18n) } }));
      else setLimits((m) => ({ ...m, [k]: { ...e, error: failure(err, t`Network anomaly`, i18n) } }));
    } finally {
      closing.current.delete(k);
      void queryClient.invalidateQueries({ queryKey: TRADING_KEY });
    }
  };
  const columns: TradeColumn<Position>[] = [
    { id: "symbol", header: t`Symbol`, cell: (x) => x.symbol, sort: (a, b) => a.symbol.localeCompare(b.symbol) },
    {
      id: "side",
      header: t`Side`,
      cell: (x) => {
        const long = x.position_side === "LONG" || (x.position_side === "NET" && !dec(x.qty).lt(0));
        return <span className={long ? "up" : "down"}>{long ? t`Long` : t`Short`}</span>;
      },
    },
    { id: "qty", header: t`Size`, numeric: true, cell: (x) => f.decimal(dec(x.qty).abs().toFixed(), 8), sort: (a, b) => compareDecimals(a.qty, b.qty) },
    { id: "entry", header: t`Entry price`, numeric: true, cell: (x) => f.decimal(x.entry_price, 8) },
    { id: "breakeven", header: t`Break-even price`, numeric: true, cell: (x) => f.decimal(x.break_even_price, 8) },
    { id: "mark", header: t`Mark price`, numeric: true, cell: (x) => f.decimal(x.mark_price, 8) },
    { id: "liq", header: t`Liq. price`, numeric: true, cell: (x) => f.decimal(x.liquidation_price, 8) },
    {
      id: "ratio",
      header: t`Margin ratio`,
      numeric: true,
      cell: (x) => {
        const r = ratioPercent(x.margin_ratio);
        return r === null ? "—" : <span className={marginRatioRisky(x.margin_ratio) ? "down" : undefined}>{`${f.decimal(r, 2)}%`}</span>;
      },
      sort: (a, b) => compareDecimals(a.margin_ratio ?? "", b.margin_ratio ?? ""),
    },
    { id: "margin", header: t`Margin`, numeric: true, cell: (x) => f.decimal(x.margin, 4) },
    {
      id: "pnl",
      header: t`PnL`,
      numeric: true,
      cell: (x) => <span className={x.unrealized_pnl?.startsWith("-") ? "down" : "up"}>{f.decimal(x.unrealized_pnl, 4)}</span>,
      sort: (a, b) => compareDecimals(a.unrealized_pnl ?? "", b.unrealized_pnl ?? ""),
    },
    {
      id: "roi",
      header: t`ROI %`,
      numeric: true,
      cell: (x) => {
        const r = roiPercent(x.unrealized_pnl, x.margin, x.notional, x.leverage);
        return r === null ? "—" : `${f.decimal(r, 2)}%`;
      },
    },
    {
      id: "actions",
      header: t`Close`,
      cell: (x) => {
        const e = limits[rowKey(x)];
        return (
          <span className="row-actions">
            {e ? (
              <>
                <input
                  className="input input--cell"
                  inputMode="decimal"
                  aria-label={t`Close price`}
                  value={e.price}
                  data-testid="close-limit-price"
                  onChange={(ev) => setLimits((m) => ({ ...m, [rowKey(x)]: { ...e, price: ev.target.value, error: undefined } }))}
                  onKeyDown={(ev) => {
                    if (ev.key === "Enter") void closeAtLimit(x);
                    if (ev.key === "Escape") stopLimit(x);
                  }}
                />
                <button type="button" className="button button--small" onClick={() => void closeAtLimit(x)} data-testid="close-limit-send">
                  {t`Confirm`}
                </button>
                <button type="button" className="button button--small" onClick={() => stopLimit(x)}>
                  {t`Cancel editing`}
                </button>
                {e.error ? (
                  <span role="alert" className="field-error">
                    {e.error}
                  </span>
                ) : null}
              </>
            ) : (
              <button type="button" className="button button--small" onClick={() => startLimit(x)} data-testid="close-limit">
                {t`Limit close`}
              </button>
            )}
            <button type="button" className="button button--small" disabled={busy.has(rowKey(x))} onClick={() => void close(x)} data-testid="close-position">
              {t`Market close`}
            </button>
            <button type="button" className="button button--small" onClick={() => setTpsl(x)} data-testid="position-tpsl-open">
              {t`TP/SL`}
            </button>
          </span>
        );
      },
    },
  ];
  return (
    <>
      {rows.length > 0 ? (
        <p className="trade-table-actions">
          <button
            type="button"
            className="button button--small"
            data-testid="close-all"
            onClick={() => {
              for (const x of rows) void close(x);
            }}
          >
            {t`Close all`}
          </button>
        </p>
      ) : null}
      <TradeTable label={t`Positions`} rows={rows} columns={columns} rowId={rowKey} empty={q.isError ? t`Network anomaly` : t`No open positions.`} testId="positions-table" />
      {tpsl ? <PositionTpSl exchange={exchange} position={tpsl} instrument={instrument} triggerTypes={triggerTypes} onClose={() => setTpsl(null)} /> : null}
    </>
  );
}

type Edit = { price: string; qty: string; error?: string; key: string };

function OpenOrders({ scope, instrument, poll }: { scope: Scope; instrument: Instrument; poll: number | false }) {
  const { t, i18n } = useLingui();
  const f = useFormat();
  const status = useStatusText();
  const q = useQuery({ ...tradingQueries.openOrders(scope), refetchInterval: poll }, queryClient);
  const algo = useQuery({ ...tradingQueries.algoOrders(scope), refetchInterval: poll }, queryClient);
  const [edits, setEdits] = useState<Record<string, Edit>>({});
  const rows = q.data ?? [];
  const algoRows = (algo.data ?? []).filter((o) => o.status === "waiting" || o.status === "pending");
  const done = () => void queryClient.invalidateQueries({ queryKey: TRADING_KEY });

  const cancel = async (o: Order, isAlgo = false) => {
    try {
      const r = isAlgo ? await tradingApi.cancelAlgo(o.id!) : await tradingApi.cancel(o.id!);
      pushToast(
        r.pending
          ? { kind: "info", text: i18n._(outcome.cancelPending) }
          : { kind: "success", text: i18n._(outcome.cancelled) },
      );
    } catch (e) {
      pushToast({ kind: "error", text: failure(e, t`Network anomaly`, i18n) });
    } finally {
      done();
    }
  };
  const cancelAll = async () => {
    try {
      const r = await tradingApi.cancelAll(scope);
      pushToast(
        r.pending
          ? { kind: "info", text: i18n._(outcome.cancelPending) }
          : { kind: "success", text: i18n._(outcome.cancelled) },
      );
    } catch (e) {
      pushToast({ kind: "error", text: failure(e, t`Network anomaly`, i18n) });
    } finally {
      done();
    }
  };
  const saveAmend = async (o: Order) => {
    const e = edits[o.id!];
    if (!e) return;
    const price = e.price.trim();
    const qty = e.qty.trim();
    if (o.symbol === instrument.symbol) {
      const issues = checkOrderRules(instrument, { type: "LIMIT", price, qty });
      if (issues.length > 0) {
        const first = issues[0]!;
        const text =
          first.code === "price.tick"
            ? t`The price must be a multiple of ${instrument.tickSize}.`
            : first.code === "qty.step"
              ? t`The size must be a multiple of ${instrument.stepSize}.`
              : first.code === "qty.min"
                ? t`Cannot be less than the minimum amount`
                : first.field === "price"
                  ? t`Enter a price.`
                  : t`Enter a size.`;
        setEdits((m) => ({ ...m, [o.id!]: { ...e, error: text } }));
        return;
      }
    }
    try {
      const change: { price?: string; qty?: string } = {};
      if (price !== o.price) change.price = price;
      if (qty !== o.qty) change.qty = qty;
      const r = await tradingApi.amend(o.id!, change, e.key);
      pushToast(r.httpStatus === 202 ? { kind: "info", text: i18n._(outcome.pending) } : { kind: "success", text: i18n._(outcome.modified) });
      setEdits((m) => {
        const n = { ...m };
        delete n[o.id!];
        return n;
      });
    } catch (err) {
      setEdits((m) => ({ ...m, [o.id!]: { ...e, error: failure(err, t`Network anomaly`, i18n) } }));
    } finally {
      done();
    }
  };
  const startEdit = (o: Order) => setEdits((m) => ({ ...m, [o.id!]: { price: o.price ?? "", qty: o.qty ?? "", key: newIdempotencyKey() } }));
  const stopEdit = (o: Order) =>
    setEdits((m) => {
      const n = { ...m };
      delete n[o.id!];
      return n;
    });

  const columns: TradeColumn<Order>[] = useMemo(
    () => [
      { id: "time", header: t`Time`, cell: (o) => time(o.created_at, f.locale), sort: (a, b) => byTime(a.created_at, b.created_at) },
      { id: "symbol", header: t`Symbol`, cell: (o) => o.symbol },
      { id: "side", header: t`Side`, cell: (o) => <span className={o.side === "BUY" ? "up" : "down"}>{sideText(t, o.side, o.position_side)}</span> },
      { id: "type", header: t`Type`, cell: (o) => (o.type === "LIMIT" ? t`Limit` : o.type === "MARKET" ? t`Market` : o.type) },
      {
        id: "price",
        header: t`Price`,
        numeric: true,
        cell: (o) => {
          const e = o.id ? edits[o.id] : undefined;
          if (!e) return f.decimal(o.price, 8);
          return (
            <input
              className="input input--cell"
              inputMode="decimal"
              aria-label={t`New price`}
              value={e.price}
              data-testid="amend-price"
              onChange={(ev) => setEdits((m) => ({ ...m, [o.id!]: { ...e, price: ev.target.value, error: undefined } }))}
              onKeyDown={(ev) => {
                if (ev.key === "Enter") void saveAmend(o);
                if (ev.key === "Escape") stopEdit(o);
              }}
            />
          );
        },
      },
      {
        id: "qty",
        header: t`Size`,
        numeric: true,
        cell: (o) => {
          const e = o.id ? edits[o.id] : undefined;
          if (!e) return f.decimal(o.qty, 8);
          return (
            <input
              className="input input--cell"
              inputMode="decimal"
              aria-label={t`New size`}
              value={e.qty}
              data-testid="amend-qty"
              onChange={(ev) => setEdits((m) => ({ ...m, [o.id!]: { ...e, qty: ev.target.value, error: undefined } }))}
              onKeyDown={(ev) => {
                if (ev.key === "Enter") void saveAmend(o);
                if (ev.key === "Escape") stopEdit(o);
              }}
            />
          );
        },
      },
      { id: "filled", header: t`Filled`, numeric: true, cell: (o) => f.decimal(o.filled_qty ?? "0", 8) },
      { id: "status", header: t`Status`, cell: (o) => <span data-status={o.status}>{status(o.status)}</span> },
      {
        id: "actions",
        header: t`Actions`,
        cell: (o) => {
          if (!o.id) return <span title={t`Placed outside exhub`}>—</span>;
          const e = edits[o.id];
          if (o.status === "pending") return t`Pending`;
          return (
            <span className="row-actions">
              {e ? (
                <>
                  <button type="button" className="button button--small" onClick={() => void saveAmend(o)} data-testid="amend-save">
                    {t`Save`}
                  </button>
                  <button type="button" className="button button--small" onClick={() => stopEdit(o)}>
                    {t`Cancel editing`}
                  </button>
                  {e.error ? (
                    <span role="alert" className="field-error">
                      {e.error}
                    </span>
                  ) : null}
                </>
              ) : (
                <>
                  <button type="button" className="button button--small" onClick={() => startEdit(o)} data-testid="amend">
                    {t`Amend`}
                  </button>
                  <button type="button" className="button button--small" onClick={() => void cancel(o)} data-testid="cancel-order">
                    {t`Cancel`}
                  </button>
                </>
              )}
            </span>
          );
        },
      },
    ],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [t, f, edits, status],
  );
  const algoColumns: TradeColumn<Order>[] = [
    { id: "time", header: t`Time`, cell: (o) => time(o.created_at, f.locale) },
    { id: "symbol", header: t`Symbol`, cell: (o) => o.symbol },
    { id: "side", header: t`Side`, cell: (o) => sideText(t, o.side, o.position_side) },
    {
      id: "type",
      header: t`Type`,
      cell: (o) =>
        ({ STOP_MARKET: t`Stop Market`, TAKE_PROFIT_MARKET: t`Take Profit Market`, STOP_LIMIT: t`Stop Limit`, TAKE_PROFIT_LIMIT: t`Take Profit Limit` })[o.type] ??
        o.type,
    },
    { id: "trigger", header: t`Trigger price`, numeric: true, cell: (o) => f.decimal(o.trigger_price, 8) },
    { id: "qty", header: t`Size`, numeric: true, cell: (o) => f.decimal(o.qty, 8) },
    { id: "status", header: t`Status`, cell: (o) => status(o.status) },
    {
      id: "actions",
      header: t`Actions`,
      cell: (o) =>
        o.id && o.status === "waiting" ? (
          <button type="button" className="button button--small" onClick={() => void cancel(o, true)}>
            {t`Cancel`}
          </button>
        ) : (
          "—"
        ),
    },
  ];
  return (
    <>
      {rows.some((o) => o.id) ? (
        <p className="trade-table-actions">
          <button type="button" className="button button--small" onClick={() => void cancelAll()} data-testid="cancel-all">
            {t`Cancel all`}
          </button>
        </p>
      ) : null}
      <TradeTable
        label={t`Open orders`}
        rows={rows}
        columns={columns}
        rowId={(o, i) => o.id ?? o.client_order_id ?? o.exchange_order_id ?? String(i)}
        empty={q.isError ? t`Network anomaly` : t`No open orders.`}
        testId="open-orders-table"
      />
      {algoRows.length > 0 ? (
        <TradeTable
          label={t`Conditional orders`}
          rows={algoRows}
          columns={algoColumns}
          rowId={(o, i) => o.id ?? o.client_order_id ?? String(i)}
          empty=""
          testId="algo-orders-table"
        />
      ) : null}
    </>
  );
}

function OrderHistory({ scope }: { scope: Scope }) {
  const { t } = useLingui();
  const f = useFormat();
  const status = useStatusText();
  const q = useQuery(tradingQueries.orderHistory(scope), queryClient);
  const columns: TradeColumn<Order>[] = [
    { id: "time", header: t`Time`, cell: (o) => time(o.updated_at ?? o.created_at, f.locale), sort: (a, b) => byTime(a.updated_at ?? a.created_at, b.updated_at ?? b.created_at) },
    { id: "symbol", header: t`Symbol`, cell: (o) => o.symbol },
    { id: "side", header: t`Side`, cell: (o) => <span className={o.side === "BUY" ? "up" : "down"}>{sideText(t, o.side, o.position_side)}</span> },
    { id: "type", header: t`Type`, cell: (o) => (o.type === "LIMIT" ? t`Limit` : o.type === "MARKET" ? t`Market` : o.type) },
    { id: "price", header: t`Price`, numeric: true, cell: (o) => f.decimal(o.price, 8) },
    { id: "avg", header: t`Average price`, numeric: true, cell: (o) => f.decimal(o.avg_price, 8) },
    { id: "qty", header: t`Size`, numeric: true, cell: (o) => f.decimal(o.qty, 8) },
    { id: "filled", header: t`Filled`, numeric: true, cell: (o) => f.decimal(o.filled_qty ?? "0", 8) },
    { id: "status", header: t`Status`, cell: (o) => <span data-status={o.status}>{status(o.status)}</span> },
  ];
  return (
    <TradeTable
      label={t`Order history`}
      rows={q.data ?? []}
      columns={columns}
      rowId={(o, i) => o.id ?? o.client_order_id ?? o.exchange_order_id ?? String(i)}
      empty={q.isError ? t`Network anomaly` : t`No orders yet.`}
      testId="order-history-table"
      initialSort={[{ id: "time", desc: true }]}
    />
  );
}

function Fills({ scope }: { scope: Scope }) {
  const { t } = useLingui();
  const f = useFormat();
  const q = useQuery(tradingQueries.fills(scope), queryClient);
  const columns: TradeColumn<Fill>[] = [
    { id: "time", header: t`Time`, cell: (x) => time(x.time, f.locale), sort: (a, b) => byTime(a.time, b.time) },
    { id: "symbol", header: t`Symbol`, cell: (x) => x.symbol },
    { id: "side", header: t`Side`, cell: (x) => <span className={x.side === "BUY" ? "up" : "down"}>{sideText(t, x.side, x.position_side)}</span> },
    { id: "price", header: t`Price`, numeric: true, cell: (x) => f.decimal(x.price, 8) },
    { id: "qty", header: t`Size`, numeric: true, cell: (x) => f.decimal(x.qty, 8) },
    { id: "fee", header: t`Fee`, numeric: true, cell: (x) => `${f.decimal(x.fee, 8)} ${x.fee_asset ?? ""}` },
    { id: "pnl", header: t`Realized PnL`, numeric: true, cell: (x) => f.decimal(x.realized_pnl, 8) },
    { id: "role", header: t`Role`, cell: (x) => (x.maker ? t`Maker` : t`Taker`) },
  ];
  return (
    <TradeTable
      label={t`Trade history`}
      rows={q.data ?? []}
      columns={columns}
      rowId={(x) => `${x.trade_id}|${x.order_id}`}
      empty={q.isError ? t`Network anomaly` : t`No trades yet.`}
      testId="fills-table"
      initialSort={[{ id: "time", desc: true }]}
    />
  );
}
