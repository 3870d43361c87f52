// Exact decimal arithmetic on the API's decimal strings. Prices and sizes
// are never turned into binary floating point for sums or comparisons:
// a value is a BigInt of units at a given scale (digits after the point).

export type Fixed = { units: bigint; scale: number };

const DECIMAL_RE = /^(-)?(\d+)(?:\.(\d+))?$/;

export function parseDecimal(s: string): Fixed {
  const m = DECIMAL_RE.exec(s.trim());
  if (!m) throw new Error(`not a decimal: ${JSON.stringify(s)}`);
  const frac = m[3] ?? "";
  const units = BigInt(m[2] + frac) * (m[1] ? -1n : 1n);
  return { units, scale: frac.length };
}

export function isDecimal(s: string | undefined | null): s is string {
  return typeof s === "string" && DECIMAL_RE.test(s.trim());
}

function rescale(v: Fixed, scale: number): bigint {
  return v.units * 10n ** BigInt(scale - v.scale);
}

export function compareDecimal(a: string, b: string): number {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  const s = Math.max(x.scale, y.scale);
  const d = rescale(x, s) - rescale(y, s);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

export function formatFixed(v: Fixed, scale = v.scale): string {
  let units = v.units;
  if (scale > v.scale) units = rescale(v, scale);
  else if (scale < v.scale) units = units / 10n ** BigInt(v.scale - scale); // truncates toward zero
  const neg = units < 0n;
  let digits = (neg ? -units : units).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, "0");
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  }
  return neg ? `-${digits}` : digits;
}

export function addDecimal(a: Fixed, b: Fixed): Fixed {
  const s = Math.max(a.scale, b.scale);
  return { units: rescale(a, s) + rescale(b, s), scale: s };
}

export function isZero(s: string): boolean {
  return parseDecimal(s).units === 0n;
}

// Digits after the point of a step such as "0.01" (2) or "10" (0).
export function stepDecimals(step: string): number {
  const v = parseDecimal(step);
  let units = v.units;
  let scale = v.scale;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale--;
  }
  return scale;
}

// step × 10^n, in canonical form: "0.01" × 10^2 = "1".
export function scaleStep(step: string, n: number): string {
  const v = parseDecimal(step);
  let units = v.units;
  let scale = v.scale - n;
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return formatFixed({ units, scale }, Math.max(0, stepDecimals(formatFixed({ units, scale }))));
}

// Formats a decimal string with exactly `decimals` digits after the point
// (padding or truncating), without going through floating point.
export function fixDecimals(s: string, decimals: number): string {
  if (!isDecimal(s)) return s;
  return formatFixed(parseDecimal(s), decimals);
}

// Adds thousands separators to the integer part of a decimal string.
export function groupThousands(s: string): string {
  const neg = s.startsWith("-");
  const body = neg ? s.slice(1) : s;
  const [int = "", frac] = body.split(".");
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${neg ? "-" : ""}${grouped}${frac !== undefined ? `.${frac}` : ""}`;
}
