// Data shaping for the Market Data page: the view kept in the URL, the time
// window of a period, and the API's series joined into rows by time. Values
// stay decimal strings; charts convert them to numbers for pixel positions.
import { isDecimal } from "~/lib/decimal";

export const PERIODS = ["5m", "15m", "1h", "4h", "1d"] as const;
export type Period = (typeof PERIODS)[number];
export const DEFAULT_PERIOD: Period = "1h";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

export const PERIOD_MS: Record<Period, number> = {
  "5m": 5 * MIN,
  "15m": 15 * MIN,
  "1h": HOUR,
  "4h": 4 * HOUR,
  "1d": DAY,
};

// How far back each period looks: a few hundred points at most, readable on
// a phone and cheap to draw.
export const WINDOW_MS: Record<Period, number> = {
  "5m": DAY,
  "15m": 3 * DAY,
  "1h": 7 * DAY,
  "4h": 30 * DAY,
  "1d": 90 * DAY,
};

export function isPeriod(s: string | null | undefined): s is Period {
  return (PERIODS as readonly string[]).includes(s ?? "");
}

// What the URL query holds: ?exchange=binance&symbol=BTCUSDT&period=1h.
export type View = { exchange: string | null; symbol: string | null; period: Period };

export function parseView(q: URLSearchParams): View {
  const p = q.get("period");
  return {
    exchange: q.get("exchange") || null,
    symbol: q.get("symbol") || null,
    period: isPeriod(p) ? p : DEFAULT_PERIOD,
  };
}

export function viewQuery(v: { exchange: string; symbol: string; period: Period }): URLSearchParams {
  return new URLSearchParams({ exchange: v.exchange, symbol: v.symbol, period: v.period });
}

// The requested window: to is the next whole minute (so that repeated
// requests within a minute hit the edge cache), from a period boundary.
export function rangeOf(period: Period, now: number): { from: number; to: number } {
  const to = Math.ceil(now / MIN) * MIN;
  const step = PERIOD_MS[period];
  const from = Math.floor((to - WINDOW_MS[period]) / step) * step;
  return { from, to };
}

// One row per period start; values by column id ("" when the series has no
// value at that time).
export type Row = { time: number; values: Record<string, string> };

// Joins series by time, ascending. Each source lists its points and which
// point fields go to which column.
export function joinByTime<P extends { time: number }>(
  sources: { points: readonly P[]; columns: Partial<Record<string, keyof P>> }[],
): Row[] {
  const byTime = new Map<number, Record<string, string>>();
  for (const s of sources) {
    for (const p of s.points) {
      let values = byTime.get(p.time);
      if (!values) {
        values = {};
        byTime.set(p.time, values);
      }
      for (const [col, field] of Object.entries(s.columns)) {
        const v = p[field as keyof P];
        values[col] = typeof v === "string" ? v : typeof v === "number" ? String(v) : "";
      }
    }
  }
  return [...byTime.entries()].sort((a, b) => a[0] - b[0]).map(([time, values]) => ({ time, values }));
}

// A decimal string as a number, for pixel positions only.
export function plotValue(s: string | undefined): number | null {
  if (!isDecimal(s)) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

export function column(rows: readonly Row[], id: string): (number | null)[] {
  return rows.map((r) => plotValue(r.values[id]));
}

export function hasColumn(rows: readonly Row[], id: string): boolean {
  return rows.some((r) => isDecimal(r.values[id]));
}

const DECIMAL = /^\s*([+-])?(\d*)(?:\.(\d*))?\s*$/;

function toUnits(s: string): { units: bigint; scale: number } {
  const m = DECIMAL.exec(s)!;
  const frac = m[3] ?? "";
  const units = BigInt(`${m[2] || "0"}${frac}`);
  return { units: m[1] === "-" ? -units : units, scale: frac.length };
}

// a / b exactly, rounded half away from zero to `digits` decimals; "" when
// either is not a decimal or b is zero.
export function divideDecimals(a: string | undefined, b: string | undefined, digits = 8): string {
  if (!isDecimal(a) || !isDecimal(b)) return "";
  const x = toUnits(a);
  const y = toUnits(b);
  if (y.units === 0n) return "";
  // a/b = (xu / 10^xs) / (yu / 10^ys); scaled by 10^digits.
  let num = x.units * 10n ** BigInt(y.scale + digits);
  let den = y.units * 10n ** BigInt(x.scale);
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const neg = num < 0n;
  const abs = neg ? -num : num;
  let q = abs / den;
  if ((abs % den) * 2n >= den) q += 1n;
  let s = q.toString();
  if (digits > 0) {
    s = s.padStart(digits + 1, "0");
    s = `${s.slice(0, -digits)}.${s.slice(-digits)}`;
  }
  return neg && q !== 0n ? `-${s}` : s;
}

// Whether a decimal string is below zero (funding paid by shorts).
export function isNegative(s: string | undefined): boolean {
  return isDecimal(s) && /^\s*-/.test(s) && /[1-9]/.test(s);
}
