import BigJs, { type Big } from "big.js";

// Exact decimal arithmetic on the API's decimal strings (prices, sizes,
// percents). Money and sizes never go through binary floating point: every
// sum, difference and comparison is a big.js decimal. Numbers are only for
// pixel positions and chart axes.

// A private big.js constructor: plain notation for every magnitude (no
// "1e-7"), and truncation as the rounding mode so a shown digit never
// claims more than the exchange sent.
// Made on first use; formatting and comparison below work on the text and
// never need it.
let D: BigJs.BigConstructor | undefined;
function big(): BigJs.BigConstructor {
  if (!D) {
    D = BigJs();
    D.NE = -1e6;
    D.PE = 1e6;
    D.RM = D.roundDown;
    D.DP = 30;
  }
  return D;
}

export type { Big };

// Signed digits with an optional point and at least one digit: "1", "-0.5",
// ".5", "5.", "+3" (white space around is allowed). No exponents.
const DECIMAL = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)\s*$/;

export function isDecimal(s: string | undefined | null): s is string {
  return typeof s === "string" && DECIMAL.test(s);
}

// The value of a decimal string; throws for anything else.
export function dec(s: string | Big): Big {
  if (typeof s !== "string") return s;
  if (!isDecimal(s)) throw new Error(`not a decimal: ${JSON.stringify(s)}`);
  return big()(s.trim());
}

// Sign, integer digits without leading zeros, fraction digits without
// trailing zeros.
function parts(s: string): { neg: boolean; int: string; frac: string } {
  const t = s.trim();
  const signed = t[0] === "-" || t[0] === "+";
  const body = signed ? t.slice(1) : t;
  const dot = body.indexOf(".");
  const int = (dot < 0 ? body : body.slice(0, dot)).replace(/^0+/, "");
  const frac = dot < 0 ? "" : body.slice(dot + 1).replace(/0+$/, "");
  return { neg: t[0] === "-" && (int !== "" || frac !== ""), int, frac };
}

// Compares two decimal strings exactly: -1, 0 or 1; throws on non-decimals.
// Sorting thousands of rows and order book levels calls this constantly, so
// it compares the digits as text (exact, and far cheaper than building two
// big.js values per comparison).
export function compareDecimal(a: string, b: string): number {
  if (!isDecimal(a) || !isDecimal(b)) throw new Error(`not a decimal: ${JSON.stringify(isDecimal(a) ? b : a)}`);
  const x = parts(a);
  const y = parts(b);
  if (x.neg !== y.neg) return x.neg ? -1 : 1;
  let c: number;
  if (x.int.length !== y.int.length) c = x.int.length < y.int.length ? -1 : 1;
  else if (x.int !== y.int) c = x.int < y.int ? -1 : 1;
  else {
    const n = Math.max(x.frac.length, y.frac.length);
    const fx = x.frac.padEnd(n, "0");
    const fy = y.frac.padEnd(n, "0");
    c = fx === fy ? 0 : fx < fy ? -1 : 1;
  }
  return x.neg && c !== 0 ? -c : c;
}

// As compareDecimal, for sorting mixed text: text that is not a decimal
// (an empty cell, "—") sorts before every number.
export function compareDecimals(a: string, b: string): number {
  const da = isDecimal(a);
  const db = isDecimal(b);
  if (!da || !db) return da === db ? 0 : da ? 1 : -1;
  return compareDecimal(a, b);
}

export function addDecimals(a: string | Big, b: string | Big): Big {
  return dec(a).plus(dec(b));
}

export function subDecimals(a: string | Big, b: string | Big): Big {
  return dec(a).minus(dec(b));
}

export function isZero(s: string): boolean {
  if (!isDecimal(s)) throw new Error(`not a decimal: ${JSON.stringify(s)}`);
  const p = parts(s);
  return p.int === "" && p.frac === "";
}

// The decimal string of a value, in plain notation with no trailing zeros.
export function decimalString(v: Big): string {
  return v.toFixed();
}

// Exactly `decimals` digits after the point, padding or truncating (toward
// zero); text that is not a decimal is returned unchanged.
// Text work only: exact, and cheap enough for every cell of a large table.
export function fixDecimals(s: string, decimals: number): string {
  if (!isDecimal(s)) return s;
  const p = parts(s);
  const frac = p.frac.slice(0, decimals).padEnd(decimals, "0");
  const int = p.int || "0";
  // Truncation can leave a negative zero ("-0.001" → "-0.00"): show "0.00".
  const zero = int === "0" && !/[1-9]/.test(frac);
  return `${p.neg && !zero ? "-" : ""}${int}${decimals > 0 ? `.${frac}` : ""}`;
}

// s × 10^k exactly, as a plain decimal string ("-1.234", -2 → "-0.01234").
export function shiftPoint(s: string, k: number): string {
  if (!isDecimal(s)) throw new Error(`not a decimal: ${JSON.stringify(s)}`);
  const p = parts(s);
  let int = p.int;
  let frac = p.frac;
  if (k > 0) {
    const moved = frac.padEnd(k, "0");
    int += moved.slice(0, k);
    frac = moved.slice(k);
  } else if (k < 0) {
    const padded = int.padStart(-k + 1, "0");
    int = padded.slice(0, k);
    frac = padded.slice(k) + frac;
  }
  int = int.replace(/^0+/, "") || "0";
  frac = frac.replace(/0+$/, "");
  const zero = int === "0" && frac === "";
  return `${p.neg && !zero ? "-" : ""}${int}${frac ? `.${frac}` : ""}`;
}

// Digits after the point of a step such as "0.01" (2), "0.50" (1) or "10" (0).
export function stepDecimals(step: string): number {
  if (!isDecimal(step)) throw new Error(`not a decimal: ${JSON.stringify(step)}`);
  return parts(step).frac.length;
}

// step × 10^n, in plain form: "0.01" × 10^2 = "1".
export function scaleStep(step: string, n: number): string {
  return dec(step).times(big()(10).pow(n)).toFixed();
}

// A fraction such as "0.0001" as a percent with `decimals` digits: "0.0100".
export function fractionToPercent(s: string | undefined, decimals = 4): string | null {
  if (!isDecimal(s)) return null;
  return fixDecimals(shiftPoint(s, 2), decimals);
}

// -1, 0 or 1: the sign of a decimal string (0 for non-decimals).
export function signOf(s: string | undefined | null): -1 | 0 | 1 {
  if (!isDecimal(s)) return 0;
  const p = parts(s);
  return p.int === "" && p.frac === "" ? 0 : p.neg ? -1 : 1;
}

// Adds thousands separators (",") to the integer part of a decimal string.
// For text in the page's language use the formatters of ~/lib/format.
export function groupThousands(s: string): string {
  const neg = s.startsWith("-");
  const body = neg ? s.slice(1) : s;
  const [int = "", frac] = body.split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${neg ? "-" : ""}${grouped}${frac !== undefined ? `.${frac}` : ""}`;
}
