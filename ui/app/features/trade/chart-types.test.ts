import { describe, expect, it } from "vitest";
import { alpha } from "./chart-draw";
import {
  baselineValue,
  CHART_TYPE_IDS,
  CHART_TYPES,
  columnUp,
  heikinAshi,
  NATIVE_TYPES,
  parseChartType,
  splitAtBaseline,
  stepPoints,
} from "./chart-types";

describe("chart types", () => {
  it("uses the spec's keys in the spec's order", () => {
    expect(CHART_TYPE_IDS.map((id) => `${id} ${CHART_TYPES[id]}`).join(", ")).toBe(
      "Bars 0, Candles 1, HollowCandles 9, Columns 13, Line 2, LineWithMarkers 14, StepLine 15, Area 3, HLCArea 16, Baseline 10, HighLow 12, HeikinAshi 8",
    );
    expect([...NATIVE_TYPES].sort()).toEqual(["Area", "Bars", "Candles", "HollowCandles", "Line"]);
  });

  it("reads stored preferences: spec key, name, or the older ids", () => {
    expect(parseChartType("13")).toBe("Columns");
    expect(parseChartType(8)).toBe("HeikinAshi");
    expect(parseChartType("StepLine")).toBe("StepLine");
    expect(parseChartType("hollow")).toBe("HollowCandles");
    expect(parseChartType("candles")).toBe("Candles");
    expect(parseChartType("4")).toBeNull();
    expect(parseChartType("nope")).toBeNull();
    expect(parseChartType(null)).toBeNull();
  });
});

describe("heikinAshi", () => {
  it("averages the candle for the close and the previous HA body for the open", () => {
    const ha = heikinAshi([
      { open: 10, high: 14, low: 8, close: 12 },
      { open: 12, high: 13, low: 9, close: 10 },
      { open: 10, high: 20, low: 10, close: 19 },
    ]);
    // First: open (10+12)/2 = 11, close (10+14+8+12)/4 = 11.
    expect(ha[0]).toEqual({ open: 11, close: 11, high: 14, low: 8 });
    // Second: open (11+11)/2 = 11, close (12+13+9+10)/4 = 11.
    expect(ha[1]).toEqual({ open: 11, close: 11, high: 13, low: 9 });
    // Third: open 11, close (10+20+10+19)/4 = 14.75; low includes the HA open below the real low.
    expect(ha[2]).toEqual({ open: 11, close: 14.75, high: 20, low: 10 });
  });

  it("keeps high and low around the body", () => {
    const ha = heikinAshi([
      { open: 100, high: 101, low: 99, close: 100 },
      { open: 50, high: 51, low: 49, close: 50 }, // a gap down: the HA open (100) is above the real high
    ]);
    expect(ha[1]!.open).toBe(100);
    expect(ha[1]!.high).toBe(100);
    expect(ha[1]!.low).toBe(49);
    expect(heikinAshi([])).toEqual([]);
  });
});

describe("stepPoints", () => {
  it("holds each value until the next x, then jumps", () => {
    const pts = stepPoints(
      [
        { x: 0, y: 5 },
        { x: 10, y: 7 },
        { x: 20, y: 3 },
      ],
      10,
    );
    expect(pts).toEqual([
      { x: 0, y: 5 },
      { x: 10, y: 5 },
      { x: 10, y: 7 },
      { x: 20, y: 7 },
      { x: 20, y: 3 },
      { x: 30, y: 3 },
    ]);
  });

  it("handles one point and none", () => {
    expect(stepPoints([{ x: 1, y: 2 }])).toEqual([{ x: 1, y: 2 }]);
    expect(stepPoints([], 5)).toEqual([]);
  });
});

describe("splitAtBaseline", () => {
  it("splits at crossings with the interpolated crossing point in both runs", () => {
    const segs = splitAtBaseline(
      [
        { x: 0, y: 12 },
        { x: 10, y: 14 },
        { x: 20, y: 6 }, // crosses 10 at x = 15
        { x: 30, y: 8 },
        { x: 40, y: 12 }, // crosses 10 at x = 35
      ],
      10,
    );
    expect(segs).toEqual([
      { above: true, points: [{ x: 0, y: 12 }, { x: 10, y: 14 }, { x: 15, y: 10 }] },
      { above: false, points: [{ x: 15, y: 10 }, { x: 20, y: 6 }, { x: 30, y: 8 }, { x: 35, y: 10 }] },
      { above: true, points: [{ x: 35, y: 10 }, { x: 40, y: 12 }] },
    ]);
  });

  it("keeps one run when the line stays on one side, and counts the baseline as above", () => {
    expect(splitAtBaseline([{ x: 0, y: 3 }, { x: 1, y: 4 }], 5)).toEqual([{ above: false, points: [{ x: 0, y: 3 }, { x: 1, y: 4 }] }]);
    const segs = splitAtBaseline([{ x: 0, y: 5 }, { x: 1, y: 4 }], 5);
    expect(segs.map((s) => s.above)).toEqual([true, false]);
    expect(segs[1]!.points[0]).toEqual({ x: 0, y: 5 });
    expect(splitAtBaseline([], 1)).toEqual([]);
  });

  it("takes the middle of the visible range as the baseline", () => {
    expect(
      baselineValue([
        { open: 1, high: 30, low: 12, close: 2 },
        { open: 1, high: 18, low: 10, close: 2 },
      ]),
    ).toBe(20);
    expect(baselineValue([])).toBeNull();
  });
});

describe("columns and colours", () => {
  it("colours a column by its close against the previous close", () => {
    const d = [
      { open: 5, high: 6, low: 4, close: 4 },
      { open: 4, high: 6, low: 4, close: 4 },
      { open: 4, high: 6, low: 3, close: 3 },
    ];
    expect([0, 1, 2].map((i) => columnUp(d, i))).toEqual([false, true, false]);
    expect(alpha("#2ebd85", 0.5)).toBe("rgba(46,189,133,0.5)");
  });
});
