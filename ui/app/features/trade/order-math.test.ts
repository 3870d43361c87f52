import { describe, expect, it } from "vitest";
import {
  checkOrderRules,
  checkTpSl,
  isOnGrid,
  marginRatioRisky,
  qtyFromPercent,
  qtyFromQuote,
  ratioPercent,
  roiPercent,
  roundToStep,
  tpslTrigger,
  type InstrumentRules,
} from "./order-math";

const btc: InstrumentRules = {
  tickSize: "0.1",
  stepSize: "0.001",
  minQty: "0.001",
  maxQty: "1000",
  minNotional: "5",
  minPrice: "0.1",
  maxPrice: "1000000",
  marketStepSize: "0.001",
  marketMinQty: "0.001",
  marketMaxQty: "120",
};

describe("grid", () => {
  it("rounds exactly to a step", () => {
    expect(roundToStep("0.0129", "0.001")).toBe("0.012");
    expect(roundToStep("0.0121", "0.001", "up")).toBe("0.013");
    expect(roundToStep("64000.05", "0.1", "nearest")).toBe("64000.1");
    expect(roundToStep("64000.04", "0.1", "nearest")).toBe("64000");
    // No binary floating point: 0.1 + 0.2 style values stay exact.
    expect(roundToStep("0.3", "0.1")).toBe("0.3");
    expect(roundToStep("12.5", "5")).toBe("10");
  });
  it("tells values on the grid", () => {
    expect(isOnGrid("64000.1", "0.1")).toBe(true);
    expect(isOnGrid("64000.15", "0.1")).toBe(false);
    expect(isOnGrid("0.3", "0.1")).toBe(true);
    expect(isOnGrid("7", "")).toBe(true);
  });
});

describe("instrument rules", () => {
  it("accepts a limit order on the grid", () => {
    expect(checkOrderRules(btc, { type: "LIMIT", price: "64000.1", qty: "0.01" })).toEqual([]);
  });
  it("names every broken rule with its limit", () => {
    expect(checkOrderRules(btc, { type: "LIMIT", price: "64000.15", qty: "0.0015" })).toEqual([
      { field: "price", code: "price.tick", limit: "0.1" },
      { field: "qty", code: "qty.step", limit: "0.001" },
    ]);
    expect(checkOrderRules(btc, { type: "LIMIT", price: "100", qty: "0.001" })).toEqual([
      { field: "qty", code: "notional.min", limit: "5" },
    ]);
    expect(checkOrderRules(btc, { type: "LIMIT", price: "2000000", qty: "2000" })).toEqual([
      { field: "price", code: "price.max", limit: "1000000" },
      { field: "qty", code: "qty.max", limit: "1000" },
    ]);
    expect(checkOrderRules({ ...btc, minQty: "0.01" }, { type: "LIMIT", price: "64000", qty: "0.005" })).toEqual([
      { field: "qty", code: "qty.min", limit: "0.01" },
    ]);
    expect(checkOrderRules(btc, { type: "LIMIT", price: "", qty: "" })).toEqual([
      { field: "price", code: "price.required" },
      { field: "qty", code: "qty.required" },
    ]);
  });
  it("checks a market order against the market limits and the reference price", () => {
    expect(checkOrderRules(btc, { type: "MARKET", qty: "121" })).toEqual([{ field: "qty", code: "qty.max", limit: "120" }]);
    expect(checkOrderRules(btc, { type: "MARKET", qty: "0.001", refPrice: "4000" })).toEqual([
      { field: "qty", code: "notional.min", limit: "5" },
    ]);
    expect(checkOrderRules(btc, { type: "MARKET", qty: "0.002", refPrice: "4000" })).toEqual([]);
  });
});

describe("size", () => {
  it("by quote amount, cut to the step", () => {
    expect(qtyFromQuote("1000", "64000", "0.001")).toBe("0.015");
    expect(qtyFromQuote("100", "3", "1")).toBe("33");
    expect(qtyFromQuote("100", undefined, "1")).toBeNull();
    expect(qtyFromQuote("abc", "3", "1")).toBeNull();
  });
  it("by percent of the maximum, cut to the step", () => {
    expect(qtyFromPercent("25", "0.0573", "0.001")).toBe("0.014");
    expect(qtyFromPercent("100", "0.0573", "0.001")).toBe("0.057");
    expect(qtyFromPercent("150", "2", "0.1")).toBe("2");
    expect(qtyFromPercent("0", "2", "0.1")).toBe("0");
    expect(qtyFromPercent("50", undefined, "0.1")).toBeNull();
  });
});

describe("TP/SL triggers", () => {
  const base = { entry: "60000", tickSize: "0.1", leverage: "10", qty: "0.5" };
  it("change %: in the trade's favour for a take-profit, against it for a stop-loss", () => {
    expect(tpslTrigger({ ...base, kind: "tp", method: "change", value: "5", side: "BUY" })).toBe("63000");
    expect(tpslTrigger({ ...base, kind: "sl", method: "change", value: "2", side: "BUY" })).toBe("58800");
    expect(tpslTrigger({ ...base, kind: "tp", method: "change", value: "5", side: "SELL" })).toBe("57000");
    expect(tpslTrigger({ ...base, kind: "sl", method: "change", value: "2", side: "SELL" })).toBe("61200");
  });
  it("ROI %: the price moves ROI / leverage", () => {
    // 50% ROI at 10x is a 5% move.
    expect(tpslTrigger({ ...base, kind: "tp", method: "roi", value: "50", side: "BUY" })).toBe("63000");
    expect(tpslTrigger({ ...base, kind: "sl", method: "roi", value: "-20", side: "BUY" })).toBe("58800");
    expect(tpslTrigger({ ...base, kind: "tp", method: "roi", value: "50", side: "SELL" })).toBe("57000");
    // Without a leverage (spot) the ROI is the change.
    expect(tpslTrigger({ ...base, leverage: undefined, kind: "tp", method: "roi", value: "5", side: "BUY" })).toBe("63000");
  });
  it("PnL: the price moves PnL / size, rounded to the tick", () => {
    expect(tpslTrigger({ ...base, kind: "tp", method: "pnl", value: "100", side: "BUY" })).toBe("60200");
    expect(tpslTrigger({ ...base, kind: "sl", method: "pnl", value: "100", side: "SELL" })).toBe("60200");
    expect(tpslTrigger({ ...base, kind: "tp", method: "pnl", value: "100", side: "SELL" })).toBe("59800");
    expect(tpslTrigger({ ...base, qty: "3", kind: "tp", method: "pnl", value: "1", side: "BUY" })).toBe("60000.3");
    expect(tpslTrigger({ ...base, qty: "", kind: "tp", method: "pnl", value: "1", side: "BUY" })).toBeNull();
  });
  it("price: the value itself on the tick", () => {
    expect(tpslTrigger({ ...base, kind: "tp", method: "price", value: "61000.04", side: "BUY" })).toBe("61000");
    expect(tpslTrigger({ ...base, kind: "tp", method: "price", value: "0", side: "BUY" })).toBeNull();
    expect(tpslTrigger({ ...base, entry: undefined, kind: "tp", method: "change", value: "5", side: "BUY" })).toBeNull();
  });
  it("validates the side rule of the spec", () => {
    expect(checkTpSl("tp", "BUY", "61000", "60000")).toBeNull();
    expect(checkTpSl("tp", "BUY", "60000", "60000")).toBe("tp.above");
    expect(checkTpSl("sl", "BUY", "61000", "60000")).toBe("sl.below");
    expect(checkTpSl("tp", "SELL", "61000", "60000")).toBe("tp.below");
    expect(checkTpSl("sl", "SELL", "59000", "60000")).toBe("sl.above");
    expect(checkTpSl("sl", "SELL", "61000", "60000")).toBeNull();
    expect(checkTpSl("sl", "SELL", "0", "60000")).toBe("trigger.positive");
  });
});

describe("ROI of a position", () => {
  it("is PnL over margin", () => {
    expect(roiPercent("25", "500")).toBe("5");
    expect(roiPercent("-12.5", undefined, "-6000", "10")).toBe("-2.08");
    expect(roiPercent(undefined, "500")).toBeNull();
  });
});

describe("margin ratio of a position", () => {
  it("shows the fraction as a percentage and flags it near liquidation", () => {
    expect(ratioPercent("0.031549")).toBe("3.15");
    expect(ratioPercent("0.00416667")).toBe("0.42");
    expect(ratioPercent("1")).toBe("100");
    expect(ratioPercent("")).toBeNull();
    expect(ratioPercent(undefined)).toBeNull();
    expect(marginRatioRisky("0.79999999")).toBe(false);
    expect(marginRatioRisky("0.8")).toBe(true);
    expect(marginRatioRisky(undefined)).toBe(false);
  });
});
