import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fakeApi, jsonResponse, member } from "~/features/dashboard/testing/fake-api";
import { preferencesSnapshot, readPreferences, resetMemberSync } from "~/features/dashboard/sync";
import {
  ALL_SYMBOLS_KEY,
  applyMemberLayout,
  changeTradeLayout,
  CHART_PREFS_KEY,
  DEFAULT_LAYOUT,
  fromDoc,
  readLayout,
  readLocalLayout,
  resetTradeLayout,
  toDoc,
} from "./trade-layout";

// A BFF holding one member's preferences document with If-Match versions.
function prefsServer(initial: Record<string, unknown>) {
  let version = 1;
  let doc = initial;
  const api = fakeApi({
    "GET /api/v1/me/preferences": () => jsonResponse({ version, preferences: doc }),
    "PUT /api/v1/me/preferences": (c) => {
      if (c.headers.get("If-Match") !== `"v${version}"`) return jsonResponse({ status: 412, code: "precondition_failed" }, 412);
      doc = (c.body as { preferences: Record<string, unknown> }).preferences;
      version++;
      return jsonResponse({ version, preferences: doc });
    },
  });
  return { api, doc: () => doc, version: () => version };
}

beforeEach(() => {
  window.localStorage.clear();
  resetMemberSync();
  resetTradeLayout();
});
afterEach(() => {
  vi.restoreAllMocks();
  resetMemberSync();
  resetTradeLayout();
});

describe("trade layout", () => {
  it("reads this browser's layout, older keys included, with defaults for what is missing or broken", () => {
    expect(readLocalLayout()).toEqual(DEFAULT_LAYOUT);
    window.localStorage.setItem(CHART_PREFS_KEY, JSON.stringify({ interval: "4h", chartType: 13, indicators: ["RSI", "nope"], depthSteps: 10 }));
    window.localStorage.setItem(ALL_SYMBOLS_KEY, JSON.stringify({ positions: true, orders: false }));
    expect(readLocalLayout()).toEqual({ interval: "4h", chartType: "Columns", indicators: ["RSI"], positionsAll: true, openOrdersAll: false, depthSteps: 10 });
    window.localStorage.setItem(CHART_PREFS_KEY, "{broken");
    expect(readLocalLayout().chartType).toBe("Candles");
  });

  it("turns a layout into the preferences document and back, keeping Bars (0) and no indicators", () => {
    const l = { interval: "1D", chartType: "Bars" as const, indicators: [], positionsAll: false, openOrdersAll: true, depthSteps: 100 };
    const doc = toDoc(l);
    expect(doc).toEqual({ chart_type: 0, interval: "1D", indicators: [], open_orders_all: true, depth_steps: 100 });
    expect(fromDoc(doc, DEFAULT_LAYOUT)).toEqual(l);
    expect(fromDoc(undefined, DEFAULT_LAYOUT)).toBe(DEFAULT_LAYOUT);
    expect(fromDoc({ chart_type: 99, indicators: ["MA"], depth_steps: 7 }, DEFAULT_LAYOUT)).toEqual({ ...DEFAULT_LAYOUT, indicators: ["MA"] });
  });

  it("keeps a visitor's changes in this browser only", () => {
    const api = fakeApi({});
    changeTradeLayout({ chartType: "Line", interval: "15m" });
    changeTradeLayout({ positionsAll: true });
    expect(readLocalLayout()).toEqual({ ...DEFAULT_LAYOUT, chartType: "Line", interval: "15m", positionsAll: true });
    expect(api.calls).toHaveLength(0);
  });

  it("saves a member's changes in their preferences with the version they read", async () => {
    const s = prefsServer({ theme: "dark" });
    await readPreferences(member.id);
    changeTradeLayout({ chartType: "HeikinAshi", indicators: ["EMA"] });
    await vi.waitFor(() => expect(s.doc().trade).toBeDefined(), { timeout: 10_000 });
    expect(s.doc()).toEqual({ theme: "dark", trade: { chart_type: 8, indicators: ["EMA"] } });
    const put = s.api.calls.find((c) => c.method === "PUT")!;
    expect(put.headers.get("If-Match")).toBe('"v1"');
    // The same layout again is not written twice.
    changeTradeLayout({ chartType: "HeikinAshi" });
    changeTradeLayout({ openOrdersAll: true });
    await vi.waitFor(() => expect((s.doc().trade as { open_orders_all?: boolean }).open_orders_all).toBe(true), { timeout: 10_000 });
    expect(s.api.calls.filter((c) => c.method === "PUT")).toHaveLength(2);
    expect(s.version()).toBe(3);
  });

  it("restores the member's saved layout in another browser, over this browser's", async () => {
    window.localStorage.setItem(CHART_PREFS_KEY, JSON.stringify({ interval: "1m", chartType: 1, indicators: ["MA", "VOL"] }));
    const s = prefsServer({ trade: { chart_type: 3, interval: "4h", indicators: ["BOLL"], positions_all: true, depth_steps: 1000 } });
    expect(readLayout().chartType).toBe("Candles");
    await readPreferences(member.id);
    applyMemberLayout();
    expect(readLayout()).toEqual({ interval: "4h", chartType: "Area", indicators: ["BOLL"], positionsAll: true, openOrdersAll: false, depthSteps: 1000 });
    // Written to this browser too, and nothing sent back.
    expect(readLocalLayout().chartType).toBe("Area");
    expect(s.api.calls.filter((c) => c.method === "PUT")).toHaveLength(0);
  });

  it("gives a member without a saved layout this browser's choices", async () => {
    window.localStorage.setItem(CHART_PREFS_KEY, JSON.stringify({ interval: "5m", chartType: 2, indicators: [] }));
    const s = prefsServer({ theme: "light" });
    await readPreferences(member.id);
    applyMemberLayout();
    await vi.waitFor(() => expect(s.doc().trade).toEqual({ chart_type: 2, interval: "5m", indicators: [] }), { timeout: 10_000 });
    expect(preferencesSnapshot()?.trade?.chart_type).toBe(2);
  });
});
