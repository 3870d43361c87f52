import { describe, expect, it } from "vitest";
import {
  column,
  divideDecimals,
  hasColumn,
  isNegative,
  joinByTime,
  parseView,
  plotValue,
  rangeOf,
  viewQuery,
  WINDOW_MS,
} from "./data";

describe("market data view", () => {
  it("reads the view from the URL query, with the default period", () => {
    expect(parseView(new URLSearchParams("exchange=okx&symbol=BTC-USDT-SWAP&period=4h"))).toEqual({
      exchange: "okx",
      symbol: "BTC-USDT-SWAP",
      period: "4h",
    });
    expect(parseView(new URLSearchParams("period=2h"))).toEqual({ exchange: null, symbol: null, period: "1h" });
    expect(viewQuery({ exchange: "binance", symbol: "BTCUSDT", period: "5m" }).toString()).toBe(
      "exchange=binance&symbol=BTCUSDT&period=5m",
    );
  });

  it("asks for a window that ends on the next minute and starts on a period boundary", () => {
    const now = Date.UTC(2026, 10, 22, 7, 33, 20);
    const r = rangeOf("4h", now);
    expect(r.to).toBe(Date.UTC(2026, 10, 22, 7, 34));
    expect(r.from % (4 * 3_600_000)).toBe(0);
    expect(r.to - r.from).toBeGreaterThanOrEqual(WINDOW_MS["4h"]);
    expect(r.to - r.from).toBeLessThan(WINDOW_MS["4h"] + 4 * 3_600_000);
    // Within the same minute the range is the same (cache friendly).
    expect(rangeOf("5m", now + 30_000)).toEqual(rangeOf("5m", now));
  });
});

describe("series shaping", () => {
  it("joins series by time, ascending, leaving gaps empty", () => {
    const rows = joinByTime<{ time: number; a?: string; b?: string }>([
      {
        points: [
          { time: 300, a: "2" },
          { time: 100, a: "1" },
        ],
        columns: { oi: "a" },
      },
      {
        points: [
          { time: 100, b: "10" },
          { time: 200, b: "20" },
        ],
        columns: { vol: "b" },
      },
    ]);
    expect(rows).toEqual([
      { time: 100, values: { oi: "1", vol: "10" } },
      { time: 200, values: { vol: "20" } },
      { time: 300, values: { oi: "2" } },
    ]);
    expect(column(rows, "oi")).toEqual([1, null, 2]);
    expect(hasColumn(rows, "vol")).toBe(true);
    expect(hasColumn(rows, "other")).toBe(false);
  });

  it("converts to numbers only for plotting", () => {
    expect(plotValue("0.0001")).toBe(0.0001);
    expect(plotValue("")).toBeNull();
    expect(plotValue(undefined)).toBeNull();
  });

  it("divides decimals exactly, rounding half away from zero", () => {
    expect(divideDecimals("27.01", "25.689", 8)).toBe("1.05142279");
    expect(divideDecimals("497.174", "514.585", 4)).toBe("0.9662");
    expect(divideDecimals("1", "3", 4)).toBe("0.3333");
    expect(divideDecimals("2", "3", 4)).toBe("0.6667");
    expect(divideDecimals("-1", "8", 2)).toBe("-0.13");
    expect(divideDecimals("0.00001", "3", 2)).toBe("0.00");
    // Values too large for a float's precision stay exact.
    expect(divideDecimals("123456789012345678901234567890", "1", 0)).toBe("123456789012345678901234567890");
    expect(divideDecimals("1", "0")).toBe("");
    expect(divideDecimals("", "1")).toBe("");
  });

  it("knows negative funding", () => {
    expect(isNegative("-0.0001")).toBe(true);
    expect(isNegative("-0")).toBe(false);
    expect(isNegative("0.0001")).toBe(false);
    expect(isNegative("")).toBe(false);
  });
});
