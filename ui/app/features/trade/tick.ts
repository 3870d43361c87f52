import { compareDecimal, isDecimal } from "./decimal";

export type Direction = "up" | "down" | "flat";

// Price tick colour: a higher price is up, a lower one down, an equal one
// keeps the previous direction.
export function tickDirection(prev: string | undefined, next: string, previous: Direction): Direction {
  if (!isDecimal(prev) || !isDecimal(next)) return previous;
  const c = compareDecimal(next, prev);
  return c > 0 ? "up" : c < 0 ? "down" : previous;
}
