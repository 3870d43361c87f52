import { describe, expect, it } from "vitest";
import { compareDecimals } from "./decimal";
import { addFavorite, FAVORITES_KEY, favoriteId, listFavorites as readFavoriteSet, removeFavorite } from "./favorites";
import { applyTicker, buildRows, filterRows, type MarketRow } from "./markets";
import { storeRegisterAccount, REGISTER_ACCOUNT_KEY } from "./register";
import { nextTickDirection } from "./tick";
import { TrailingThrottle, type Clock } from "./visibility";
import { xLink, links } from "./links";

describe("tick direction", () => {
  it("is up on a higher price, down on a lower one, and keeps the previous direction when equal", () => {
    expect(nextTickDirection("100", "100.5", "flat")).toBe("up");
    expect(nextTickDirection("100.5", "100.4", "up")).toBe("down");
    expect(nextTickDirection("100.4", "100.40", "down")).toBe("down");
    expect(nextTickDirection("100.4", "100.4", "up")).toBe("up");
    expect(nextTickDirection("", "1", "flat")).toBe("flat");
    // Exact: no floating point rounding on long decimals.
    expect(nextTickDirection("0.10000000000000001", "0.1", "up")).toBe("down");
  });
});

describe("decimal comparison", () => {
  it("orders decimal strings exactly, signs and scales included", () => {
    const xs = ["-1.5", "10", "9.99", "0", "-0.001", "100000000000000000001", "100000000000000000000.5", ""];
    const sorted = [...xs].sort(compareDecimals);
    expect(sorted).toEqual(["", "-1.5", "-0.001", "0", "9.99", "10", "100000000000000000000.5", "100000000000000000001"]);
    expect(compareDecimals("-0", "0")).toBe(0);
    expect(compareDecimals("1.10", "1.1")).toBe(0);
  });
});

class FakeClock implements Clock {
  t = 0;
  timers: { at: number; fn: () => void; id: number }[] = [];
  private next = 1;
  now() {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number) {
    const id = this.next++;
    this.timers.push({ at: this.t + ms, fn, id });
    return id;
  }
  clearTimeout(h: unknown) {
    this.timers = this.timers.filter((x) => x.id !== h);
  }
  advance(ms: number) {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const due = this.timers[0];
      if (!due || due.at > end) break;
      this.timers.shift();
      this.t = due.at;
      due.fn();
    }
    this.t = end;
  }
}

describe("visibility reload throttle", () => {
  it("reloads at most once per 5 minutes, trailing only", () => {
    const clock = new FakeClock();
    let reloads = 0;
    const th = new TrailingThrottle(() => reloads++, 300_000, clock);
    // A return one minute after the page load waits for the end of the window.
    clock.advance(60_000);
    th.trigger();
    expect(reloads).toBe(0);
    clock.advance(239_999);
    expect(reloads).toBe(0);
    // More returns inside the window collapse into the same reload.
    th.trigger();
    th.trigger();
    clock.advance(1);
    expect(reloads).toBe(1);
    // Long after the last reload, a return reloads at once (wait 0, trailing edge).
    clock.advance(600_000);
    th.trigger();
    expect(reloads).toBe(1);
    clock.advance(0);
    expect(reloads).toBe(2);
    // And the next return within 5 minutes waits again.
    clock.advance(10_000);
    th.trigger();
    clock.advance(289_999);
    expect(reloads).toBe(2);
    clock.advance(1);
    expect(reloads).toBe(3);
    th.trigger();
    th.cancel();
    clock.advance(1_000_000);
    expect(reloads).toBe(3);
  });
});

describe("quick register", () => {
  it("stores a trimmed account and ignores empty input", () => {
    expect(storeRegisterAccount("   ")).toBe(false);
    expect(localStorage.getItem(REGISTER_ACCOUNT_KEY)).toBeNull();
    expect(storeRegisterAccount(" +81 90 1234 5678 ")).toBe(true);
    expect(localStorage.getItem(REGISTER_ACCOUNT_KEY)).toBe("+81 90 1234 5678");
  });
});

describe("favorites", () => {
  it("are stored locally in the trade screen's format", () => {
    const id = favoriteId("okx", "SWAP", "BTC-USDT-SWAP");
    expect(id).toBe("okx:SWAP:BTC-USDT-SWAP");
    addFavorite(id);
    addFavorite("binance:SPOT:ETHUSDT");
    expect(JSON.parse(localStorage.getItem(FAVORITES_KEY)!)).toEqual(["binance:SPOT:ETHUSDT", "okx:SWAP:BTC-USDT-SWAP"]);
    removeFavorite(id);
    expect([...readFavoriteSet()]).toEqual(["binance:SPOT:ETHUSDT"]);
    localStorage.setItem(FAVORITES_KEY, "{broken");
    expect(readFavoriteSet().size).toBe(0);
  });
});

describe("X link", () => {
  it("differs for Japanese", () => {
    expect(xLink("en", false)).toBe(links.x);
    expect(xLink("ja", false)).toBe(links.xJapan);
    expect(xLink("en", true)).toBe(links.xJapan);
    expect(links.x).not.toBe(links.xJapan);
  });
});

function row(symbol: string, base: string, type: "SPOT" | "SWAP", exchange = "binance"): MarketRow {
  return buildRows({ slug: exchange, name: exchange.toUpperCase() }, null, type, [
    { symbol, base, quote: "USDT", tickSize: "0.1" } as never,
  ], [])[0]!;
}

describe("markets search and tabs", () => {
  const rows = [
    row("BTCUSDT", "BTC", "SWAP"),
    row("BTC-USDT-SWAP", "BTC", "SWAP", "okx"),
    row("ETHUSDT", "ETH", "SWAP"),
    row("BTCUSDT", "BTC", "SPOT"),
  ];
  const f = (query: string, type: "SPOT" | "SWAP" = "SWAP", favoritesOnly = false, favorites = new Set<string>()) =>
    filterRows(rows, { type, query, favoritesOnly, favorites }).map((r) => r.id);
  it("keeps the tab's market type and matches symbol, assets and exchange", () => {
    expect(f("")).toEqual(["binance:SWAP:BTCUSDT", "okx:SWAP:BTC-USDT-SWAP", "binance:SWAP:ETHUSDT"]);
    expect(f("", "SPOT")).toEqual(["binance:SPOT:BTCUSDT"]);
    expect(f("btc usdt")).toEqual(["binance:SWAP:BTCUSDT", "okx:SWAP:BTC-USDT-SWAP"]);
    expect(f("BTC-USDT")).toEqual(["binance:SWAP:BTCUSDT", "okx:SWAP:BTC-USDT-SWAP"]);
    expect(f("okx")).toEqual(["okx:SWAP:BTC-USDT-SWAP"]);
    expect(f("eth")).toEqual(["binance:SWAP:ETHUSDT"]);
    expect(f("doge")).toEqual([]);
    expect(f("", "SWAP", true, new Set(["binance:SWAP:ETHUSDT"]))).toEqual(["binance:SWAP:ETHUSDT"]);
  });
  it("applies live tickers with the tick direction", () => {
    const r = { ...rows[0]!, last: "100" };
    const up = applyTicker(r, { last: "101", changePct24h: "1" }, nextTickDirection);
    expect(up.direction).toBe("up");
    expect(up.changePct24h).toBe("1");
    const same = applyTicker(up, { last: "101" }, nextTickDirection);
    expect(same).toBe(up);
    expect(applyTicker(up, { last: "99.5" }, nextTickDirection).direction).toBe("down");
  });
});
