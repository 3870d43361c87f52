import { isDecimal, scaleStep, stepDecimals } from "~/lib/decimal";

// The product's "depth decimal": the book's price bucket as a number of
// tick steps. 1 (the default) is the instrument's own tick; each next
// choice is ten times coarser.
export const DEFAULT_DEPTH_STEPS = 1;
export const DEPTH_STEP_CHOICES = [1, 10, 100, 1000] as const;

export type GroupingOption = { steps: number; size: string; decimals: number };

export function groupingOptions(tickSize: string): GroupingOption[] {
  if (!isDecimal(tickSize) || Number(tickSize) <= 0) return [];
  return DEPTH_STEP_CHOICES.map((steps, i) => {
    const size = scaleStep(tickSize, i);
    return { steps, size, decimals: stepDecimals(size) };
  });
}

// The option for a chosen number of steps, falling back to the default.
export function groupingFor(tickSize: string, steps: number): GroupingOption | null {
  const opts = groupingOptions(tickSize);
  return opts.find((o) => o.steps === steps) ?? opts[0] ?? null;
}
