import { useLingui } from "@lingui/react";
import { useMemo } from "react";
import { fixDecimals, isDecimal, shiftPoint, signOf, stepDecimals } from "./decimal";

// Number formatting for every screen: Intl.NumberFormat in the page's
// language (the current Lingui locale). API values are decimal strings and
// are formatted as strings (Intl formats a numeric string exactly, without
// binary floating point); numbers are only for chart axes.

export const MISSING = "—";

const formats = new Map<string, Intl.NumberFormat>();

export function numberFormat(locale: string, opts: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `${locale}|${JSON.stringify(opts)}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, opts);
    formats.set(key, f);
  }
  return f;
}

function literal(s: string): Intl.StringNumericLiteral {
  return s.trim() as Intl.StringNumericLiteral;
}

// A decimal string rounded half away from zero to at most maxDigits after
// the point (at least minDigits).
export function formatDecimal(s: string | undefined, locale: string, maxDigits = 8, minDigits = 0): string {
  if (!isDecimal(s)) return MISSING;
  return numberFormat(locale, { minimumFractionDigits: minDigits, maximumFractionDigits: maxDigits }).format(literal(s));
}

// A price or size with exactly the decimals of its step ("0.01" → 2), cut
// (never rounded up) to that step: what the exchange can quote.
export function formatStep(s: string | undefined, step: string | undefined, locale: string): string {
  if (!isDecimal(s)) return MISSING;
  const d = isDecimal(step) && signOf(step) > 0 ? stepDecimals(step) : Math.min(8, decimalsOf(s));
  return formatFixed(s, d, locale);
}

// Exactly `decimals` digits after the point, truncated.
export function formatFixed(s: string | undefined, decimals: number, locale: string): string {
  if (!isDecimal(s)) return MISSING;
  return numberFormat(locale, { minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(
    literal(fixDecimals(s, decimals)),
  );
}

function decimalsOf(s: string): number {
  const i = s.indexOf(".");
  return i < 0 ? 0 : s.trim().length - i - 1;
}

// A 24h change given in percent ("-1.234" meaning -1.234 %): always two
// decimals (rounded half away from zero) and a sign: "+1.20%", "-1.23%",
// "0.00%", in the locale's percent format.
export function formatChangePct(pct: string | undefined, locale: string): string {
  if (!isDecimal(pct)) return MISSING;
  const fraction = shiftPoint(pct, -2);
  return numberFormat(locale, {
    style: "percent",
    minimumFractionDigits: 2,
    maximumFractionDigits: 2,
    signDisplay: "exceptZero",
  }).format(literal(fraction));
}

// A fraction ("0.0001") as a percent ("0.0100%"), exactly.
export function formatPercent(fraction: string | undefined, locale: string, maxDigits = 6, minDigits = 4): string {
  if (!isDecimal(fraction)) return MISSING;
  return numberFormat(locale, { style: "percent", minimumFractionDigits: minDigits, maximumFractionDigits: maxDigits }).format(
    literal(fraction),
  );
}

// A large amount in short form: "2.49B" in English, "24.9億" in Japanese
// (three significant digits). Show formatFull() beside it (a title).
export function formatCompact(s: string | undefined, locale: string): string {
  if (!isDecimal(s)) return MISSING;
  return numberFormat(locale, { notation: "compact", maximumSignificantDigits: 3 }).format(literal(s));
}

// Every digit the API sent, grouped: "2,490,353,029.25".
export function formatFull(s: string | undefined, locale: string): string {
  if (!isDecimal(s)) return MISSING;
  return numberFormat(locale, { maximumFractionDigits: 20 }).format(literal(s));
}

// Axis labels: short, from tick values (numbers, not data).
export function formatAxisNumber(n: number, locale: string): string {
  return numberFormat(locale, { notation: "compact", maximumFractionDigits: 2 }).format(n);
}

export function formatAxisPercent(fraction: number, locale: string): string {
  return numberFormat(locale, { style: "percent", maximumFractionDigits: 4 }).format(fraction);
}

export type Formatters = {
  locale: string;
  decimal: (s: string | undefined, maxDigits?: number, minDigits?: number) => string;
  step: (s: string | undefined, step: string | undefined) => string;
  fixed: (s: string | undefined, decimals: number) => string;
  changePct: (pct: string | undefined) => string;
  percent: (fraction: string | undefined, maxDigits?: number, minDigits?: number) => string;
  compact: (s: string | undefined) => string;
  full: (s: string | undefined) => string;
};

export function formatters(locale: string): Formatters {
  return {
    locale,
    decimal: (s, max, min) => formatDecimal(s, locale, max, min),
    step: (s, step) => formatStep(s, step, locale),
    fixed: (s, d) => formatFixed(s, d, locale),
    changePct: (p) => formatChangePct(p, locale),
    percent: (f, max, min) => formatPercent(f, locale, max, min),
    compact: (s) => formatCompact(s, locale),
    full: (s) => formatFull(s, locale),
  };
}

// The formatters for the page's current language; re-renders on a switch.
export function useFormat(): Formatters {
  const { i18n } = useLingui();
  const locale = i18n.locale;
  return useMemo(() => formatters(locale), [locale]);
}
