// Time formatting for the Market Data page; numbers come from ~/lib/format
// (re-exported here for the page's modules).
import type { Period } from "./data";

export { formatAxisNumber, formatAxisPercent, formatDecimal, formatPercent, MISSING } from "~/lib/format";

const dateFormats = new Map<string, Intl.DateTimeFormat>();

function dateFormat(locale: string, opts: Intl.DateTimeFormatOptions, timeZone?: string): Intl.DateTimeFormat {
  const key = `${locale}|${timeZone ?? ""}|${JSON.stringify(opts)}`;
  let f = dateFormats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { ...opts, timeZone });
    dateFormats.set(key, f);
  }
  return f;
}

// The start of a period, in full (tooltips and tables): a date for daily
// periods, a date and time otherwise, in the viewer's time zone.
export function formatTime(ms: number, locale: string, period: Period, timeZone?: string): string {
  const opts: Intl.DateTimeFormatOptions =
    period === "1d" ? { dateStyle: "medium" } : { dateStyle: "medium", timeStyle: "short" };
  return dateFormat(locale, opts, timeZone).format(ms);
}

// The start of a period on the time axis.
export function formatAxisTime(ms: number, locale: string, period: Period, timeZone?: string): string {
  const opts: Intl.DateTimeFormatOptions =
    period === "5m" || period === "15m"
      ? { hour: "2-digit", minute: "2-digit" }
      : period === "1h"
        ? { month: "numeric", day: "numeric", hour: "2-digit", minute: "2-digit" }
        : { month: "numeric", day: "numeric" };
  return dateFormat(locale, opts, timeZone).format(ms);
}
