// Exact comparison of the API's decimal strings (prices, sizes, percents),
// with no binary floating point.
const DECIMAL = /^\s*([+-])?(\d*)(?:\.(\d*))?\s*$/;

export function isDecimalString(s: string | undefined | null): s is string {
  if (typeof s !== "string") return false;
  const m = DECIMAL.exec(s);
  return m !== null && ((m[2] ?? "") + (m[3] ?? "")).length > 0;
}

function parts(s: string): { neg: boolean; int: string; frac: string } {
  const m = DECIMAL.exec(s)!;
  const int = (m[2] ?? "").replace(/^0+/, "");
  const frac = (m[3] ?? "").replace(/0+$/, "");
  const zero = int === "" && frac === "";
  return { neg: m[1] === "-" && !zero, int, frac };
}

function compareAbs(a: { int: string; frac: string }, b: { int: string; frac: string }): number {
  if (a.int.length !== b.int.length) return a.int.length < b.int.length ? -1 : 1;
  if (a.int !== b.int) return a.int < b.int ? -1 : 1;
  const n = Math.max(a.frac.length, b.frac.length);
  const fa = a.frac.padEnd(n, "0");
  const fb = b.frac.padEnd(n, "0");
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

// -1, 0 or 1. Text that is not a decimal sorts before every number.
export function compareDecimals(a: string, b: string): number {
  const da = isDecimalString(a);
  const db = isDecimalString(b);
  if (!da || !db) return da === db ? 0 : da ? 1 : -1;
  const x = parts(a);
  const y = parts(b);
  if (x.neg !== y.neg) return x.neg ? -1 : 1;
  const c = compareAbs(x, y);
  return x.neg ? -c : c;
}
