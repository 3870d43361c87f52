import { useEffect, useSyncExternalStore } from "react";
import type { TradePrefsDoc } from "~/features/dashboard/api";
import { preferencesSnapshot, updatePreferences, usePreferencesStatus } from "~/features/dashboard/sync";
import { useMember } from "~/lib/session";
import { readStored, writeStored } from "~/preferences";
import { CHART_TYPES, parseChartType, type ChartTypeId } from "./chart-types";
import { DEFAULT_DEPTH_STEPS, DEPTH_STEP_CHOICES } from "./grouping";

// The trade screen's layout: the chart's type, interval and indicators, the
// account tabs' "all symbols" switches and the order book's grouping. A visitor's stays in this browser
// (localStorage); a signed-in member's is also saved in their preferences on
// the server (preferences.trade) and, once those are read after sign-in,
// the stored layout replaces this browser's, so it follows the member to
// another browser. Only the member's own changes are written back.

export const INDICATORS = ["MA", "EMA", "BOLL", "VOL", "MACD", "RSI"];

export type TradeLayout = {
  // A resolution code ("1m", "4h", "1D"); null: the exchange's default.
  interval: string | null;
  chartType: ChartTypeId;
  indicators: string[];
  positionsAll: boolean;
  openOrdersAll: boolean;
  // The order book's price bucket in ticks (the spec's depth decimal).
  depthSteps: number;
};

export const DEFAULT_LAYOUT: TradeLayout = {
  interval: null,
  chartType: "Candles",
  indicators: ["MA", "VOL"],
  positionsAll: false,
  openOrdersAll: false,
  depthSteps: DEFAULT_DEPTH_STEPS,
};

export const CHART_PREFS_KEY = "exhub.trade.chart";
export const ALL_SYMBOLS_KEY = "exhub.trade.allSymbols";

function parseJSON(raw: string | null): Record<string, unknown> | null {
  if (!raw) return null;
  try {
    const v: unknown = JSON.parse(raw);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function depthSteps(v: unknown): number | null {
  return typeof v === "number" && (DEPTH_STEP_CHOICES as readonly number[]).includes(v) ? v : null;
}

function indicatorList(v: unknown): string[] | null {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && INDICATORS.includes(x)) : null;
}

// This browser's layout (older builds' keys, kept as they are).
export function readLocalLayout(): TradeLayout {
  const chart = parseJSON(readStored(CHART_PREFS_KEY));
  const all = parseJSON(readStored(ALL_SYMBOLS_KEY));
  return {
    interval: typeof chart?.interval === "string" ? chart.interval : DEFAULT_LAYOUT.interval,
    chartType: parseChartType(chart?.chartType) ?? DEFAULT_LAYOUT.chartType,
    indicators: indicatorList(chart?.indicators) ?? DEFAULT_LAYOUT.indicators,
    positionsAll: all?.positions === true,
    openOrdersAll: all?.orders === true,
    depthSteps: depthSteps(chart?.depthSteps) ?? DEFAULT_LAYOUT.depthSteps,
  };
}

function writeLocalLayout(l: TradeLayout): void {
  writeStored(CHART_PREFS_KEY, JSON.stringify({ interval: l.interval, chartType: CHART_TYPES[l.chartType], indicators: l.indicators, depthSteps: l.depthSteps }));
  writeStored(ALL_SYMBOLS_KEY, JSON.stringify({ positions: l.positionsAll, orders: l.openOrdersAll }));
}

// The stored document over a base layout: what it names wins.
export function fromDoc(doc: TradePrefsDoc | undefined, base: TradeLayout): TradeLayout {
  if (!doc) return base;
  const indicators = indicatorList(doc.indicators);
  return {
    interval: typeof doc.interval === "string" && doc.interval !== "" ? doc.interval : base.interval,
    chartType: parseChartType(doc.chart_type) ?? base.chartType,
    indicators: indicators ?? base.indicators,
    positionsAll: typeof doc.positions_all === "boolean" ? doc.positions_all : base.positionsAll,
    openOrdersAll: typeof doc.open_orders_all === "boolean" ? doc.open_orders_all : base.openOrdersAll,
    depthSteps: depthSteps(doc.depth_steps) ?? base.depthSteps,
  };
}

export function toDoc(l: TradeLayout): TradePrefsDoc {
  const doc: TradePrefsDoc = { chart_type: CHART_TYPES[l.chartType], indicators: [...l.indicators] };
  if (l.interval) doc.interval = l.interval;
  if (l.positionsAll) doc.positions_all = true;
  if (l.openOrdersAll) doc.open_orders_all = true;
  if (l.depthSteps !== DEFAULT_DEPTH_STEPS) doc.depth_steps = l.depthSteps;
  return doc;
}

function sameDoc(a: TradePrefsDoc | undefined, b: TradePrefsDoc): boolean {
  if (!a) return false;
  return (
    a.chart_type === b.chart_type &&
    (a.interval ?? "") === (b.interval ?? "") &&
    (a.positions_all ?? false) === (b.positions_all ?? false) &&
    (a.open_orders_all ?? false) === (b.open_orders_all ?? false) &&
    (a.depth_steps ?? DEFAULT_DEPTH_STEPS) === (b.depth_steps ?? DEFAULT_DEPTH_STEPS) &&
    JSON.stringify(a.indicators ?? null) === JSON.stringify(b.indicators ?? null)
  );
}

// The member's layout when their preferences are read, else this browser's.
export function readLayout(): TradeLayout {
  return fromDoc(preferencesSnapshot()?.trade, readLocalLayout());
}

// The member's preferences get the layout when it differs from what they hold
// (no-op for a visitor or before the preferences are read).
function saveRemote(l: TradeLayout): void {
  const doc = preferencesSnapshot();
  if (!doc) return;
  const next = toDoc(l);
  if (sameDoc(doc.trade, next)) return;
  void updatePreferences({ trade: next }).catch(() => undefined);
}

let current: TradeLayout | null = null;
const listeners = new Set<() => void>();

function emit(): void {
  for (const l of listeners) l();
}

function snapshot(): TradeLayout {
  current ??= readLayout();
  return current;
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

// A change made on the trade screen: shown at once, kept in this browser and
// saved in the member's preferences.
export function changeTradeLayout(patch: Partial<TradeLayout>): void {
  const next = { ...readLayout(), ...patch };
  current = next;
  writeLocalLayout(next);
  saveRemote(next);
  emit();
}

// Once a member's preferences are read: their stored layout replaces this
// browser's; a member without one gets this browser's (a visitor's choices
// carry over at the first sign-in).
let applied: object | null = null;

export function applyMemberLayout(): void {
  const doc = preferencesSnapshot();
  if (!doc || doc === applied) return;
  applied = doc;
  const next = readLayout();
  if (doc.trade) writeLocalLayout(next);
  else if (readStored(CHART_PREFS_KEY) !== null || readStored(ALL_SYMBOLS_KEY) !== null) saveRemote(next);
  current = next;
  emit();
}

// Forgets the layout read (tests).
export function resetTradeLayout(): void {
  current = null;
  applied = null;
  emit();
}

export function useTradeLayout(): [TradeLayout, (patch: Partial<TradeLayout>) => void] {
  const member = useMember();
  const status = usePreferencesStatus(member?.id ?? null);
  useEffect(() => {
    if (status === "ready") applyMemberLayout();
  }, [status]);
  const layout = useSyncExternalStore(subscribe, snapshot, snapshot);
  return [layout, changeTradeLayout];
}
