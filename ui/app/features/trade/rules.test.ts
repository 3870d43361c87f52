import { describe, expect, it } from "vitest";
import { OrderBook, type BookMessage } from "./book";
import { fundingCountdown } from "./countdown";
import { fixDecimals, fractionToPercent, groupThousands, scaleStep, stepDecimals } from "~/lib/decimal";
import { groupingFor, groupingOptions } from "./grouping";
import { availableResolutions, pickResolution, RESOLUTIONS } from "./intervals";
import { nextTickDirection as tickDirection } from "~/lib/tick";
import { mergeTrades } from "./Trades";

const snap = (seq: number, bids: [string, string][], asks: [string, string][]): BookMessage => ({
  type: "snapshot",
  seq,
  prevSeq: 0,
  time: 1,
  bids,
  asks,
});
const upd = (prevSeq: number, seq: number, bids: [string, string][], asks: [string, string][]): BookMessage => ({
  type: "update",
  seq,
  prevSeq,
  time: 2,
  bids,
  asks,
});

describe("depth grouping", () => {
  it("offers the tick and coarser steps, default one tick", () => {
    expect(groupingOptions("0.01").map((o) => o.size)).toEqual(["0.01", "0.1", "1", "10"]);
    expect(groupingOptions("0.5").map((o) => o.size)).toEqual(["0.5", "5", "50", "500"]);
    expect(groupingOptions("0.10").map((o) => [o.size, o.decimals])).toEqual([
      ["0.1", 1],
      ["1", 0],
      ["10", 0],
      ["100", 0],
    ]);
    expect(groupingFor("0.1", 1)?.size).toBe("0.1");
    expect(groupingFor("0.1", 100)?.size).toBe("10");
    expect(groupingFor("0.1", 7)?.size).toBe("0.1"); // unknown choice falls back to the default
    expect(groupingOptions("")).toEqual([]);
    expect(groupingOptions("0")).toEqual([]);
  });

  it("formats exactly, without floating point", () => {
    expect(scaleStep("0.00001", 3)).toBe("0.01");
    expect(stepDecimals("0.00100")).toBe(3);
    expect(fixDecimals("0.1", 8)).toBe("0.10000000");
    expect(fixDecimals("64987.399", 1)).toBe("64987.3");
    expect(fixDecimals("12345678901234567.123456789", 9)).toBe("12345678901234567.123456789");
    expect(groupThousands("1234567.5")).toBe("1,234,567.5");
    expect(groupThousands("-999")).toBe("-999");
    expect(fractionToPercent("0.0001")).toBe("0.0100");
    expect(fractionToPercent("-0.000375")).toBe("-0.0375");
    expect(fractionToPercent("1")).toBe("100.0000");
    expect(fractionToPercent(undefined)).toBeNull();
  });
});

describe("order book from snapshot and updates", () => {
  it("applies chained updates, removes zero levels, sums totals and the spread", () => {
    const b = new OrderBook();
    expect(b.apply(upd(0, 5, [["1", "1"]], []))).toBe("ignored"); // nothing before a snapshot
    expect(b.apply(snap(10, [["100.5", "1.5"], ["100", "2"]], [["101", "0.25"], ["102.5", "1"]]))).toBe("applied");
    expect(b.apply(upd(10, 12, [["100.7", "0.3"], ["100", "0"]], [["101.0", "0.75"]]))).toBe("applied");
    const v = b.view(10);
    expect(v.seq).toBe(12);
    expect(v.bids.map((r) => [r.price, r.qty, r.total])).toEqual([
      ["100.7", "0.3", "0.3"],
      ["100.5", "1.5", "1.8"],
    ]);
    // "101.0" updates the level "101".
    expect(v.asks.map((r) => [r.price, r.qty, r.total])).toEqual([
      ["101", "0.75", "0.75"],
      ["102.5", "1", "1.75"],
    ]);
    expect(v.spread).toBe("0.3");
    expect(v.bids[1]?.depth).toBe(1); // the larger side's total is the full bar
    expect(v.asks[1]?.depth).toBeCloseTo(1.75 / 1.8, 9);
  });

  it("reports a gap and drops the book until the next snapshot", () => {
    const b = new OrderBook();
    b.apply(snap(10, [["1", "1"]], [["2", "1"]]));
    expect(b.apply(upd(11, 13, [["1", "5"]], []))).toBe("gap");
    expect(b.ready).toBe(false);
    expect(b.apply(upd(13, 14, [["1", "5"]], []))).toBe("ignored");
    b.apply(snap(20, [["1.5", "3"]], [["2", "1"]]));
    expect(b.view(5).bids.map((r) => r.price)).toEqual(["1.5"]);
  });

  it("keeps the best levels first and cuts to the row count", () => {
    const b = new OrderBook();
    const bids: [string, string][] = Array.from({ length: 30 }, (_, i) => [`${1000 - i}`, "1"]);
    const asks: [string, string][] = Array.from({ length: 30 }, (_, i) => [`${1030 - i}`, "1"]);
    b.apply(snap(1, bids.reverse(), asks));
    const v = b.view(3);
    expect(v.bids.map((r) => r.price)).toEqual(["1000", "999", "998"]);
    expect(v.asks.map((r) => r.price)).toEqual(["1001", "1002", "1003"]);
    expect(v.asks[2]?.total).toBe("3");
  });
});

describe("chart resolutions", () => {
  it("maps the product's list to exchange codes and hides what an exchange lacks", () => {
    expect(RESOLUTIONS.map((r) => r.label)).toEqual([
      "1s", "1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1D", "3D", "1W", "1M",
    ]);
    const okx = availableResolutions(["1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1d", "3d", "1w", "1M", "2d"]);
    expect(okx.map((r) => r.label)).toEqual(["1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "12h", "1D", "3D", "1W", "1M"]);
    expect(okx.find((r) => r.label === "1M")?.period).toEqual({ type: "month", span: 1 });
    expect(okx.find((r) => r.label === "1W")?.code).toBe("1w");
    expect(availableResolutions(undefined)).toEqual([]);
    expect(pickResolution(okx, "4h")?.code).toBe("4h");
    expect(pickResolution(okx, "1s")?.code).toBe("15m"); // not offered: the default
    expect(pickResolution(availableResolutions(["1h", "1d"]), null)?.code).toBe("1h");
    expect(pickResolution([], "1m")).toBeNull();
  });
});

describe("funding countdown", () => {
  it("counts down to the next funding as HH:MM:SS", () => {
    const now = 1_700_000_000_000;
    expect(fundingCountdown(now + (7 * 3600 + 59 * 60 + 5) * 1000 + 999, now)).toBe("07:59:05");
    expect(fundingCountdown(now + 61_000, now)).toBe("00:01:01");
    expect(fundingCountdown(now - 5_000, now)).toBe("00:00:00");
    expect(fundingCountdown(0, now)).toBe("--:--:--");
    expect(fundingCountdown(undefined, now)).toBe("--:--:--");
  });
});

describe("tick direction", () => {
  it("is up when higher, down when lower, unchanged when equal", () => {
    expect(tickDirection("100", "100.1", "flat")).toBe("up");
    expect(tickDirection("100.1", "100.10", "up")).toBe("up");
    expect(tickDirection("100.1", "100.1", "down")).toBe("down");
    expect(tickDirection("100.1", "99.9", "up")).toBe("down");
    expect(tickDirection(undefined, "99.9", "flat")).toBe("flat");
  });
});

describe("last trades", () => {
  const tr = (id: string, time: number) => ({ id, price: "1", qty: "1", quoteQty: "1", side: "buy" as const, time });
  it("adds new trades on top, skips duplicates and keeps the newest 30", () => {
    let list = mergeTrades([], [tr("1", 1), tr("2", 2)]);
    expect(list.map((t) => t.id)).toEqual(["2", "1"]);
    list = mergeTrades(list, [tr("2", 2), tr("3", 3)]);
    expect(list.map((t) => t.id)).toEqual(["3", "2", "1"]);
    // An older page (the REST list arriving after the stream) sorts below.
    list = mergeTrades(list, [tr("0", 0)]);
    expect(list.map((t) => t.id)).toEqual(["3", "2", "1", "0"]);
    list = mergeTrades(list, Array.from({ length: 40 }, (_, i) => tr(`n${i}`, 10 + i)));
    expect(list).toHaveLength(30);
    expect(list[0]?.id).toBe("n39");
  });
});
