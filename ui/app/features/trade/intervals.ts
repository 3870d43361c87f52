import type { Period } from "klinecharts";

// The chart resolutions of the product, in order, with the interval code
// the BFF uses for each (capabilities.intervals of an exchange) and the
// chart's period. An exchange shows only the ones it lists.
export type Resolution = { label: string; code: string; period: Period };

export const RESOLUTIONS: readonly Resolution[] = [
  { label: "1s", code: "1s", period: { type: "second", span: 1 } },
  { label: "1m", code: "1m", period: { type: "minute", span: 1 } },
  { label: "3m", code: "3m", period: { type: "minute", span: 3 } },
  { label: "5m", code: "5m", period: { type: "minute", span: 5 } },
  { label: "15m", code: "15m", period: { type: "minute", span: 15 } },
  { label: "30m", code: "30m", period: { type: "minute", span: 30 } },
  { label: "1h", code: "1h", period: { type: "hour", span: 1 } },
  { label: "2h", code: "2h", period: { type: "hour", span: 2 } },
  { label: "4h", code: "4h", period: { type: "hour", span: 4 } },
  { label: "6h", code: "6h", period: { type: "hour", span: 6 } },
  { label: "8h", code: "8h", period: { type: "hour", span: 8 } },
  { label: "12h", code: "12h", period: { type: "hour", span: 12 } },
  { label: "1D", code: "1d", period: { type: "day", span: 1 } },
  { label: "3D", code: "3d", period: { type: "day", span: 3 } },
  { label: "1W", code: "1w", period: { type: "week", span: 1 } },
  { label: "1M", code: "1M", period: { type: "month", span: 1 } },
];

export const DEFAULT_RESOLUTION = "15m";

// The resolutions an exchange offers, in the product's order.
export function availableResolutions(intervals: readonly string[] | undefined): Resolution[] {
  const have = new Set(intervals ?? []);
  return RESOLUTIONS.filter((r) => have.has(r.code));
}

// The chosen code when the exchange has it, else the default, else the
// first one offered.
export function pickResolution(available: Resolution[], wanted: string | null): Resolution | null {
  return (
    available.find((r) => r.code === wanted) ??
    available.find((r) => r.code === DEFAULT_RESOLUTION) ??
    available[0] ??
    null
  );
}

// Length of one bar in milliseconds (months counted as 31 days: only used
// to page back through history, never to place a bar).
export function periodMs(p: Period): number {
  const unit = { second: 1e3, minute: 6e4, hour: 36e5, day: 864e5, week: 6048e5, month: 2678e6, year: 31536e6 }[p.type];
  return unit * p.span;
}
