import { compareDecimals, isDecimalString } from "./decimal";

export type TickDirection = "up" | "down" | "flat";

// A price tick's colour: higher than the previous price is up (green),
// lower is down (red), equal keeps the previous direction.
export function nextTickDirection(prev: string | undefined, next: string, previous: TickDirection): TickDirection {
  if (!isDecimalString(prev) || !isDecimalString(next)) return previous;
  const c = compareDecimals(next, prev);
  return c > 0 ? "up" : c < 0 ? "down" : previous;
}
