import { describe, expect, it } from "vitest";
import { areaPath, extent, indexAt, keyTarget, labelIndices, linePath, niceTicks, scale, slotX } from "./chart-math";

describe("chart geometry", () => {
  it("finds the value range, with zero for columns", () => {
    expect(extent([[3, null, 5], [4]])).toEqual([3, 5]);
    expect(extent([[3, 5]], true)).toEqual([0, 5]);
    expect(extent([[-2, 5]], true)).toEqual([-2, 5]);
    expect(extent([[null]])).toBeNull();
    expect(extent([[2, 2]])).toEqual([1.9, 2.1]);
  });

  it("picks round ticks covering the range", () => {
    expect(niceTicks([3, 97], 4)).toEqual({ ticks: [0, 25, 50, 75, 100], domain: [0, 100] });
    const small = niceTicks([-0.00012, 0.0003], 4);
    expect(small.ticks[0]).toBeLessThanOrEqual(-0.00012);
    expect(small.ticks[small.ticks.length - 1]).toBeGreaterThanOrEqual(0.0003);
    expect(small.ticks).toContain(0);
  });

  it("maps values and slots to pixels and back", () => {
    const y = scale([0, 100], [200, 0]);
    expect(y(0)).toBe(200);
    expect(y(50)).toBe(100);
    expect(slotX(0, 4, 0, 400)).toBe(50);
    expect(slotX(3, 4, 0, 400)).toBe(350);
    expect(indexAt(60, 4, 0, 400)).toBe(0);
    expect(indexAt(399, 4, 0, 400)).toBe(3);
    expect(indexAt(-20, 4, 0, 400)).toBe(0);
    expect(indexAt(900, 4, 0, 400)).toBe(3);
    expect(indexAt(10, 0, 0, 400)).toBeNull();
  });

  it("draws lines and areas broken at missing values", () => {
    expect(linePath([0, 10, 20, 30], [1, 2, null, 4])).toBe("M0.0,1.0L10.0,2.0M30.0,4.0");
    expect(areaPath([0, 10], [1, 2], 50)).toBe("M0.0,50.0L0.0,1.0L10.0,2.0L10.0,50.0Z");
  });

  it("labels evenly spaced points ending at the newest", () => {
    expect(labelIndices(3, 5)).toEqual([0, 1, 2]);
    const l = labelIndices(100, 5);
    expect(l[l.length - 1]).toBe(99);
    expect(l.length).toBeLessThanOrEqual(5);
  });
});

describe("chart keyboard", () => {
  it("moves the tooltip with arrows, page keys, Home and End", () => {
    expect(keyTarget("ArrowRight", null, 10)).toBe(9);
    expect(keyTarget("Home", null, 10)).toBe(0);
    expect(keyTarget("ArrowLeft", 5, 10)).toBe(4);
    expect(keyTarget("ArrowRight", 5, 10)).toBe(6);
    expect(keyTarget("ArrowRight", 9, 10)).toBe(9);
    expect(keyTarget("ArrowLeft", 0, 10)).toBe(0);
    expect(keyTarget("PageUp", 5, 30)).toBe(0);
    expect(keyTarget("PageDown", 5, 30)).toBe(15);
    expect(keyTarget("End", 2, 10)).toBe(9);
    expect(keyTarget("Tab", 2, 10)).toBeNull();
    expect(keyTarget("a", null, 10)).toBeNull();
    expect(keyTarget("ArrowLeft", null, 0)).toBeNull();
  });
});
