// Formatting for the Market Data page. Values from the API are decimal
// strings and are formatted as strings (Intl formats a numeric string
// exactly, without going through binary floating point); only chart pixel
// positions and axis ticks use numbers.
import { isDecimal } from "~/lib/decimal";
import type { Period } from "./data";

export const MISSING = "—";

const numberFormats = new Map<string, Intl.NumberFormat>();

function numberFormat(locale: string, opts: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${locale}|${JSON.stringify(opts)}`;
  let f = numberFormats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, opts);
    numberFormats.set(key, f);
  }
  return f;
}

function literal(s: string): Intl.StringNumericLiteral {
  return s.trim() as Intl.StringNumericLiteral;
}

// A decimal string in the locale's digits and separators, rounded half away
// from zero to at most maxDigits after the point.
export function formatDecimal(s: string | undefined, locale: string, maxDigits = 8, minDigits = 0): string {
  if (!isDecimal(s)) return MISSING;
  return numberFormat(locale, { minimumFractionDigits: minDigits, maximumFractionDigits: maxDigits }).format(
    literal(s),
  );
}

// A fraction ("0.0001") as a percent ("0.0100%"), exactly.
export function formatPercent(fraction: string | undefined, locale: string, maxDigits = 6, minDigits = 4): string {
  if (!isDecimal(fraction)) return MISSING;
  return numberFormat(locale, {
    style: "percent",
    minimumFractionDigits: minDigits,
    maximumFractionDigits: maxDigits,
  }).format(literal(fraction));
}

// Axis labels: short, from tick values (numbers, not data).
export function formatAxisNumber(n: number, locale: string): string {
  return numberFormat(locale, { notation: "compact", maximumFractionDigits: 2 }).format(n);
}

export function formatAxisPercent(fraction: number, locale: string): string {
  return numberFormat(locale, { style: "percent", maximumFractionDigits: 4 }).format(fraction);
}

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
