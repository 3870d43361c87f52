// Chart types of the trade screen, keyed as in the product spec (section 9).
// KLineChart draws five of them itself (candles, hollow candles, bars, line,
// area); the others are drawn by a custom indicator on the candle pane over
// hidden candles, from the pure functions below.
//
// Every number here is a display coordinate (a price as the chart draws it,
// or a pixel): nothing computed from them is sent back or summed as money.

export const CHART_TYPES = {
  Bars: 0,
  Candles: 1,
  HollowCandles: 9,
  Columns: 13,
  Line: 2,
  LineWithMarkers: 14,
  StepLine: 15,
  Area: 3,
  HLCArea: 16,
  Baseline: 10,
  HighLow: 12,
  HeikinAshi: 8,
} as const;

export type ChartTypeId = keyof typeof CHART_TYPES;
export const CHART_TYPE_IDS = Object.keys(CHART_TYPES) as ChartTypeId[];

// Types KLineChart draws natively; the rest are custom.
export const NATIVE_TYPES: ReadonlySet<ChartTypeId> = new Set(["Bars", "Candles", "HollowCandles", "Line", "Area"]);

// A stored preference: a spec key ("13"), a type name, or an older id.
const LEGACY: Record<string, ChartTypeId> = { candles: "Candles", hollow: "HollowCandles", bars: "Bars", line: "Line", area: "Area" };
export function parseChartType(v: unknown): ChartTypeId | null {
  if (typeof v === "number" || (typeof v === "string" && /^\d+$/.test(v))) {
    const n = Number(v);
    return CHART_TYPE_IDS.find((id) => CHART_TYPES[id] === n) ?? null;
  }
  if (typeof v !== "string") return null;
  if ((CHART_TYPE_IDS as string[]).includes(v)) return v as ChartTypeId;
  return LEGACY[v] ?? null;
}

export type OHLC = { open: number; high: number; low: number; close: number };

// Heikin Ashi candles: close = (o+h+l+c)/4, open = (previous HA open +
// previous HA close)/2 (the first: (o+c)/2), high and low include both.
export function heikinAshi(data: readonly OHLC[]): OHLC[] {
  const out: OHLC[] = [];
  let prev: OHLC | null = null;
  for (const d of data) {
    const close = (d.open + d.high + d.low + d.close) / 4;
    const open = prev ? (prev.open + prev.close) / 2 : (d.open + d.close) / 2;
    const c: OHLC = { open, close, high: Math.max(d.high, open, close), low: Math.min(d.low, open, close) };
    out.push(c);
    prev = c;
  }
  return out;
}

export type Point = { x: number; y: number };

// A step line through points: each value holds until the next point's x,
// then jumps vertically. The last value extends by `tail` to the right.
export function stepPoints(points: readonly Point[], tail = 0): Point[] {
  const out: Point[] = [];
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    if (i > 0) out.push({ x: p.x, y: points[i - 1]!.y });
    out.push(p);
  }
  const last = points[points.length - 1];
  if (last && tail > 0) out.push({ x: last.x + tail, y: last.y });
  return out;
}

export type Segment = { above: boolean; points: Point[] };

// Splits a line at a baseline into runs above (value >= base) and below,
// inserting the crossing point (linear interpolation) into both runs, so
// the two fills meet exactly on the baseline. `y` is the value here.
export function splitAtBaseline(points: readonly Point[], base: number): Segment[] {
  const out: Segment[] = [];
  let cur: Segment | null = null;
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    const above = p.y >= base;
    if (!cur) {
      cur = { above, points: [p] };
      continue;
    }
    if (above !== cur.above) {
      const q = points[i - 1]!;
      const t = (base - q.y) / (p.y - q.y);
      const cross = { x: q.x + (p.x - q.x) * t, y: base };
      if (cross.x !== q.x || q.y !== base) cur.points.push(cross);
      out.push(cur);
      cur = { above, points: cross.x === p.x ? [p] : [cross, p] };
    } else {
      cur.points.push(p);
    }
  }
  if (cur) out.push(cur);
  return out;
}

// The baseline of the Baseline type: the middle of the visible price range.
export function baselineValue(visible: readonly OHLC[]): number | null {
  if (visible.length === 0) return null;
  let hi = -Infinity;
  let lo = Infinity;
  for (const d of visible) {
    hi = Math.max(hi, d.high);
    lo = Math.min(lo, d.low);
  }
  return (hi + lo) / 2;
}

// Column colour: up when the close is at or above the previous close.
export function columnUp(data: readonly OHLC[], i: number): boolean {
  return i === 0 ? data[0]!.close >= data[0]!.open : data[i]!.close >= data[i - 1]!.close;
}
