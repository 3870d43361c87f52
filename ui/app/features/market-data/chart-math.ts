// Geometry and keyboard logic of the Market Data charts (pure functions).

export type Domain = [number, number];

// The range of the given series, with zero included when asked (columns
// grow from zero) and a flat range widened so it still has a height.
export function extent(series: readonly (readonly (number | null)[])[], includeZero = false): Domain | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series)
    for (const v of s) {
      if (v === null) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  if (lo === Infinity) return null;
  if (includeZero) {
    lo = Math.min(lo, 0);
    hi = Math.max(hi, 0);
  }
  if (lo === hi) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.05;
    return [lo - pad, hi + pad];
  }
  return [lo, hi];
}

function niceStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
}

// About `count` round tick values covering the domain, and the domain
// widened to the outer ticks.
export function niceTicks([lo, hi]: Domain, count = 4): { ticks: number[]; domain: Domain } {
  const step = niceStep(hi - lo, count);
  const start = Math.floor(lo / step) * step;
  const end = Math.ceil(hi / step) * step;
  const ticks: number[] = [];
  for (let i = 0, v = start; v <= end + step / 2 && i < 50; i++, v = start + i * step)
    ticks.push(Number(v.toPrecision(12)));
  return { ticks, domain: [start, end] };
}

export function scale([d0, d1]: Domain, [r0, r1]: [number, number]): (v: number) => number {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return (v) => r0 + (v - d0) * k;
}

// The x position (centre of its slot) of point i of n across [left, right].
export function slotX(i: number, n: number, left: number, right: number): number {
  const w = (right - left) / Math.max(1, n);
  return left + w * (i + 0.5);
}

// The index of the point whose slot holds x.
export function indexAt(x: number, n: number, left: number, right: number): number | null {
  if (n === 0) return null;
  const w = (right - left) / n;
  return Math.min(n - 1, Math.max(0, Math.floor((x - left) / w)));
}

export const PAGE_STEP = 10;

// The point the keyboard moves to from `current`, or null when the key does
// not move the tooltip. With no point active, any move starts at the newest.
export function keyTarget(key: string, current: number | null, n: number): number | null {
  if (n === 0) return null;
  const last = n - 1;
  if (current === null)
    return ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown"].includes(key)
      ? key === "Home"
        ? 0
        : last
      : null;
  switch (key) {
    case "ArrowLeft":
    case "ArrowDown":
      return Math.max(0, current - 1);
    case "ArrowRight":
    case "ArrowUp":
      return Math.min(last, current + 1);
    case "PageUp":
      return Math.max(0, current - PAGE_STEP);
    case "PageDown":
      return Math.min(last, current + PAGE_STEP);
    case "Home":
      return 0;
    case "End":
      return last;
    default:
      return null;
  }
}

// Which points get a time label: about `max` evenly spaced, always ending
// on the newest.
export function labelIndices(n: number, max: number): number[] {
  if (n === 0 || max <= 0) return [];
  if (n <= max) return Array.from({ length: n }, (_, i) => i);
  const every = Math.ceil(n / max);
  const out: number[] = [];
  for (let i = (n - 1) % every; i < n; i += every) out.push(i);
  return out;
}

// An SVG path through the points, broken where a value is missing.
export function linePath(xs: readonly number[], ys: readonly (number | null)[]): string {
  let d = "";
  let pen = false;
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i];
    if (y === null || y === undefined) {
      pen = false;
      continue;
    }
    d += `${pen ? "L" : "M"}${xs[i]!.toFixed(1)},${y.toFixed(1)}`;
    pen = true;
  }
  return d;
}

// The same path closed down to `base` (an area), one piece per unbroken run.
export function areaPath(xs: readonly number[], ys: readonly (number | null)[], base: number): string {
  let d = "";
  let run: number[] = [];
  const flush = () => {
    if (run.length > 0) {
      const first = run[0]!;
      const last = run[run.length - 1]!;
      d += `M${xs[first]!.toFixed(1)},${base.toFixed(1)}`;
      for (const i of run) d += `L${xs[i]!.toFixed(1)},${ys[i]!.toFixed(1)}`;
      d += `L${xs[last]!.toFixed(1)},${base.toFixed(1)}Z`;
    }
    run = [];
  };
  for (let i = 0; i < xs.length; i++) {
    if (ys[i] === null || ys[i] === undefined) flush();
    else run.push(i);
  }
  flush();
  return d;
}
