import { compareDecimal, isDecimal } from "./decimal";

export type TickDirection = "up" | "down" | "flat";

// A price tick's colour (spec): a higher price than the previous one is up
// (green), a lower one down (red), an equal one keeps the previous direction.
export function nextTickDirection(prev: string | undefined, next: string, previous: TickDirection): TickDirection {
  if (!isDecimal(prev) || !isDecimal(next)) return previous;
  const c = compareDecimal(next, prev);
  return c > 0 ? "up" : c < 0 ? "down" : previous;
}
