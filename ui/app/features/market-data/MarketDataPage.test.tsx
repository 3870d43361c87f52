import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { setApiFetch } from "~/api/client";
import { activateLocale } from "~/i18n";
import { capabilities, exchange, fakeApi, instrument, jsonResponse, ticker } from "~/test/fixtures";
import { renderApp } from "~/test/render";

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 20, 0, 0);
const N = 24;
const times = Array.from({ length: N }, (_, i) => T0 + i * HOUR);

const analytics = (longShort: string[]) => ({
  ...capabilities,
  analytics: {
    openInterest: true,
    longShortRatio: longShort,
    takerVolume: true,
    fundingRateHistory: true,
    periods: ["5m", "1h", "1d"],
  },
});

const exchanges = [
  exchange({
    key: 1,
    slug: "binance",
    name: "Binance",
    capabilities: analytics(["ACCOUNTS", "TOP_ACCOUNTS", "TOP_POSITIONS"]),
  }),
  exchange({ key: 2, slug: "okx", name: "OKX", capabilities: analytics(["ACCOUNTS"]) }),
  exchange({ key: 3, slug: "bybit", name: "Bybit", status: "coming_soon", pluginState: "none", marketTypes: [] }),
];

const instruments: Record<string, ReturnType<typeof instrument>[]> = {
  binance: [instrument("ETHUSDT", "ETH", "USDT"), instrument("BTCUSDT", "BTC", "USDT")],
  okx: [instrument("ETH-USDT-SWAP", "ETH", "USDT"), instrument("BTC-USDT-SWAP", "BTC", "USDT")],
};

type Opts = { empty?: boolean; fail?: (path: string) => boolean };

function stack(opts: Opts = {}) {
  const points = (f: (i: number) => object) => (opts.empty ? [] : times.map((t, i) => ({ time: t, ...f(i) })));
  const api = fakeApi({
    "/api/v1/exchanges": () => jsonResponse({ exchanges }),
    "/api/v1/instruments": (u) => jsonResponse({ instruments: instruments[u.searchParams.get("exchange")!] ?? [] }),
    "/api/v1/tickers": () =>
      jsonResponse({
        tickers: [
          { ...ticker("BTCUSDT", "65000", "1", "1"), fundingRate: "0.000135", nextFundingTime: T0 + 30 * HOUR },
        ],
      }),
    "/api/v1/analytics/open-interest": () =>
      jsonResponse({
        points: points((i) => ({
          openInterest: `${200 + i}.123456789`,
          openInterestValue: `${20_000_000 + i}.987654321`,
        })),
      }),
    "/api/v1/analytics/candles": () =>
      jsonResponse({
        candles: opts.empty
          ? []
          : times.map((t, i) => ({
              openTime: t,
              open: "1",
              high: "1",
              low: "1",
              close: "1",
              volume: `${10 + i}.5`,
              quoteVolume: `${650_000 + i}.25`,
              trades: 1,
              closed: true,
            })),
      }),
    "/api/v1/analytics/long-short-ratio": (u) => {
      const k = u.searchParams.get("kind");
      const bump = k === "accounts" ? 0 : k === "top_accounts" ? 1 : 2;
      return jsonResponse({
        kind: k,
        points: points((i) => ({ longShortRatio: `1.${bump}${i % 10}`, longRatio: "0.6068", shortRatio: "0.3932" })),
      });
    },
    "/api/v1/analytics/taker-volume": () =>
      jsonResponse({ points: points((i) => ({ buyVolume: `${100 + i}`, sellVolume: "50", buySellRatio: "-0.5" })) }),
    "/api/v1/analytics/funding-rate": () =>
      jsonResponse({
        points: opts.empty
          ? []
          : times
              .filter((_, i) => i % 8 === 0)
              .map((t, i) => ({
                time: t,
                rate: i === 1 ? "-0.00005" : "0.0001",
                settlements: 1,
                lastRate: "0.0001",
                markPrice: "65000.5",
              })),
      }),
  });
  const fetch = async (req: Request) => {
    const path = new URL(req.url).pathname;
    if (opts.fail?.(path)) return jsonResponse({ title: "Service Unavailable", status: 503, detail: "down" }, 503);
    return api.fetch(req);
  };
  setApiFetch(fetch);
  return api;
}

const panel = (id: string) => screen.getByTestId(`panel-${id}`);
const ready = (id: string) => waitFor(() => expect(panel(id).dataset.state).toBe("ready"));
const location = () => screen.getByTestId("location").textContent;

describe("market data page", () => {
  it("shows the default view of the first futures exchange and keeps it in the URL", async () => {
    const api = stack();
    renderApp("/marketData");
    expect(await screen.findByRole("heading", { name: "Market Data", level: 1 })).toBeTruthy();
    for (const id of ["open-interest", "long-short", "taker-volume", "funding-rate"]) await ready(id);
    await waitFor(() => expect(screen.getByTestId("md-subtitle").textContent).toBe("BTCUSDT perpetual on Binance"));
    // The coming-soon exchange is shown and cannot be chosen.
    const bybit = within(screen.getByTestId("exchange-picker")).getByRole("button", { name: /Bybit/ });
    expect((bybit as HTMLButtonElement).disabled).toBe(true);
    expect(within(bybit).getByText("Coming soon")).toBeTruthy();
    expect(screen.getByRole("button", { name: /Binance/ }).getAttribute("aria-pressed")).toBe("true");
    // Every analytics call names the view; the long/short kinds follow the exchange's capabilities.
    const oi = api.calls.find((c) => c.includes("/analytics/open-interest"))!;
    expect(oi).toMatch(/exchange=binance&symbol=BTCUSDT&period=1h&from=\d+&to=\d+/);
    const kinds = api.calls
      .filter((c) => c.includes("/long-short-ratio"))
      .map((c) => new URLSearchParams(c.split("?")[1]).get("kind"));
    expect(kinds.sort()).toEqual(["accounts", "top_accounts", "top_positions"]);
    expect(api.calls.some((c) => c.includes("exchange=bybit"))).toBe(false);
    // Four charts with every point.
    expect(screen.getByTestId("chart-open-interest").dataset.points).toBe(String(N));
    expect(screen.getByTestId("chart-funding-rate").dataset.points).toBe("3");
    // Funding columns are green above zero and red below; the predicted rate is shown.
    const bars = [...panel("funding-rate").querySelectorAll<SVGRectElement>("[data-series=rate] rect")].map(
      (r) => r.style.fill,
    );
    expect(bars).toEqual(["var(--up)", "var(--down)", "var(--up)"]);
    expect(within(screen.getByTestId("next-funding")).getByText("0.0135%")).toBeTruthy();
    // The URL names the view shown (replacing the bare /marketData).
    await waitFor(() => expect(location()).toBe("/marketData?exchange=binance&symbol=BTCUSDT&period=1h"));
  });

  it("replaces an unknown exchange, symbol or period in the URL with the defaults", async () => {
    stack();
    renderApp("/marketData?exchange=bybit&symbol=NOPE&period=2h");
    await ready("open-interest");
    await waitFor(() => expect(location()).toBe("/marketData?exchange=binance&symbol=BTCUSDT&period=1h"));
    renderApp("/marketData?exchange=okx&symbol=NOPE&period=15m");
    await waitFor(() =>
      expect(screen.getAllByTestId("location")[1]!.textContent).toBe(
        "/marketData?exchange=okx&symbol=BTC-USDT-SWAP&period=15m",
      ),
    );
  });

  it("moves the tooltip with the keyboard and shows exact values", async () => {
    stack();
    renderApp("/marketData?exchange=binance&symbol=BTCUSDT&period=1h");
    await ready("open-interest");
    const chart = screen.getByTestId("chart-open-interest");
    act(() => chart.focus());
    fireEvent.keyDown(chart, { key: "End" });
    let tip = within(chart).getByTestId("tooltip");
    expect(chart.dataset.active).toBe(String(N - 1));
    // Decimals from the API, formatted as strings: no float rounding.
    expect(within(tip).getByText("20,000,023.99 USDT")).toBeTruthy();
    expect(within(tip).getByText("223.1235 BTC")).toBeTruthy();
    expect(within(tip).getByText("650,023.25 USDT")).toBeTruthy();
    fireEvent.keyDown(chart, { key: "ArrowLeft" });
    fireEvent.keyDown(chart, { key: "ArrowLeft" });
    expect(chart.dataset.active).toBe(String(N - 3));
    tip = within(chart).getByTestId("tooltip");
    expect(within(tip).getByText("221.1235 BTC")).toBeTruthy();
    fireEvent.keyDown(chart, { key: "Home" });
    expect(chart.dataset.active).toBe("0");
    expect(within(chart).getByTestId("tooltip").textContent).toContain("200.1235 BTC");
    fireEvent.keyDown(chart, { key: "Escape" });
    expect(within(chart).queryByTestId("tooltip")).toBeNull();

    // Taker ratio is computed exactly from the volumes, whatever the API's ratio says.
    const taker = screen.getByTestId("chart-taker-volume");
    act(() => taker.focus());
    fireEvent.keyDown(taker, { key: "ArrowRight" });
    const row = within(taker).getByTestId("tooltip").querySelector('[data-key="ratio"] dd')!;
    expect(row.textContent).toBe("2.46");
    // Buys stand on the zero line, sells hang from it, in the same slot.
    const rect = (series: string, i: number) => taker.querySelectorAll(`[data-series=${series}] rect`)[i]!;
    const num = (r: Element, a: string) => Number(r.getAttribute(a));
    const buy = rect("buy", 5);
    const sell = rect("sell", 5);
    expect(num(buy, "x")).toBe(num(sell, "x"));
    expect(num(buy, "y") + num(buy, "height")).toBeCloseTo(num(sell, "y"), 5);
    expect(num(buy, "height")).toBeGreaterThan(num(sell, "height"));
  });

  it("shows a sortable table with the same rows", async () => {
    stack();
    renderApp("/marketData?exchange=binance&symbol=BTCUSDT&period=1h");
    await ready("taker-volume");
    fireEvent.click(within(panel("taker-volume")).getByRole("button", { name: "Table" }));
    const table = within(panel("taker-volume")).getByTestId("md-table");
    const rows = () => [...table.querySelectorAll("tbody tr")] as HTMLElement[];
    expect(rows()).toHaveLength(N);
    // Newest first by default.
    expect(rows()[0]!.dataset.time).toBe(String(times[N - 1]));
    expect(rows()[0]!.querySelector('[data-column="buy"]')!.textContent).toBe("123");
    const buy = within(table).getByRole("button", { name: "Taker buy volume (BTC)" });
    fireEvent.click(buy);
    const sorted = () => rows().map((r) => r.querySelector('[data-column="buy"]')!.textContent);
    const th = buy.closest("th")!;
    if (th.getAttribute("aria-sort") === "descending") fireEvent.click(buy);
    await waitFor(() => expect(th.getAttribute("aria-sort")).toBe("ascending"));
    expect(sorted()[0]).toBe("100");
    expect(sorted()[N - 1]).toBe("123");
    fireEvent.click(within(panel("taker-volume")).getByRole("button", { name: "Chart" }));
    expect(screen.getByTestId("chart-taker-volume")).toBeTruthy();
  });

  it("switches period and exchange through the URL", async () => {
    const api = stack();
    renderApp("/marketData?exchange=binance&symbol=ETHUSDT&period=1h");
    await ready("open-interest");
    expect(screen.getByTestId("md-subtitle").textContent).toBe("ETHUSDT perpetual on Binance");
    fireEvent.click(within(screen.getByTestId("period-picker")).getByRole("button", { name: "4h" }));
    await waitFor(() => expect(api.calls.some((c) => c.includes("symbol=ETHUSDT&period=4h"))).toBe(true));
    await ready("open-interest");
    expect(location()).toBe("/marketData?exchange=binance&symbol=ETHUSDT&period=4h");
    fireEvent.click(screen.getByRole("button", { name: /OKX/ }));
    // The new exchange opens on its BTC/USDT perpetual, with the period kept.
    await waitFor(() => expect(screen.getByTestId("md-subtitle").textContent).toBe("BTC-USDT-SWAP perpetual on OKX"));
    await waitFor(() =>
      expect(api.calls.some((c) => c.includes("exchange=okx&symbol=BTC-USDT-SWAP&period=4h"))).toBe(true),
    );
    await ready("long-short");
    await waitFor(() => expect(location()).toBe("/marketData?exchange=okx&symbol=BTC-USDT-SWAP&period=4h"));
    const kinds = api.calls
      .filter((c) => c.includes("/long-short-ratio") && c.includes("exchange=okx"))
      .map((c) => new URLSearchParams(c.split("?")[1]).get("kind"));
    expect(new Set(kinds)).toEqual(new Set(["accounts"]));
    expect(
      within(panel("long-short"))
        .getAllByRole("listitem")
        .map((l) => l.textContent),
    ).toEqual(["All accounts"]);
  });

  it("searches symbols with the keyboard", async () => {
    const api = stack();
    renderApp("/marketData?exchange=binance&symbol=BTCUSDT&period=1h");
    await ready("open-interest");
    const box = screen.getByRole("combobox", { name: "Symbol" });
    fireEvent.focus(box);
    fireEvent.change(box, { target: { value: "eth" } });
    expect(
      within(screen.getByRole("listbox", { name: "Symbols" }))
        .getAllByRole("option")
        .map((o) => o.dataset.symbol),
    ).toEqual(["ETHUSDT"]);
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(screen.getByTestId("md-subtitle").textContent).toBe("ETHUSDT perpetual on Binance"));
    await waitFor(() =>
      expect(api.calls.some((c) => c.includes("/analytics/funding-rate?exchange=binance&symbol=ETHUSDT"))).toBe(true),
    );
    fireEvent.change(box, { target: { value: "zzz" } });
    expect(screen.getByText("No symbols match.")).toBeTruthy();
    fireEvent.keyDown(box, { key: "Escape" });
    expect((box as HTMLInputElement).value).toBe("ETHUSDT");
  });

  it("shows a skeleton per panel while the analytics load", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const api = stack();
    setApiFetch(async (req) => {
      if (new URL(req.url).pathname.startsWith("/api/v1/analytics/")) await gate;
      return api.fetch(req);
    });
    renderApp("/marketData?exchange=binance&symbol=BTCUSDT&period=1h");
    await waitFor(() => expect(screen.getAllByTestId("skeleton")).toHaveLength(4));
    for (const id of ["open-interest", "long-short", "taker-volume", "funding-rate"])
      expect(panel(id).dataset.state).toBe("loading");
    release();
    for (const id of ["open-interest", "long-short", "taker-volume", "funding-rate"]) await ready(id);
    expect(screen.queryAllByTestId("skeleton")).toHaveLength(0);
  });

  it("says when a period has no data", async () => {
    stack({ empty: true });
    renderApp("/marketData?exchange=binance&symbol=BTCUSDT&period=5m");
    await waitFor(() => expect(panel("open-interest").dataset.state).toBe("empty"));
    for (const id of ["long-short", "taker-volume", "funding-rate"])
      await waitFor(() => expect(panel(id).dataset.state).toBe("empty"));
    expect(screen.getAllByText("No data for this period.")).toHaveLength(4);
  });

  it("shows an error with a retry per panel and the network anomaly banner", async () => {
    let down = true;
    stack({ fail: (p) => down && p === "/api/v1/analytics/funding-rate" });
    renderApp("/marketData?exchange=binance&symbol=BTCUSDT&period=1h");
    await waitFor(() => expect(panel("funding-rate").dataset.state).toBe("error"));
    await ready("open-interest");
    expect(
      within(panel("funding-rate")).getByText("This data could not be loaded. Check your connection and try again."),
    ).toBeTruthy();
    expect(await screen.findByTestId("network-anomaly")).toBeTruthy();
    down = false;
    fireEvent.click(within(panel("funding-rate")).getByRole("button", { name: "Retry" }));
    await ready("funding-rate");
    await waitFor(() => expect(screen.queryByTestId("network-anomaly")).toBeNull());
  });

  it("shows the page-level error when the exchanges cannot be loaded", async () => {
    let down = true;
    stack({ fail: (p) => down && p === "/api/v1/exchanges" });
    renderApp("/marketData");
    const alert = await screen.findByText("Market data could not be loaded. Check your connection and try again.");
    down = false;
    fireEvent.click(within(alert.closest("[role=alert]") as HTMLElement).getByRole("button", { name: "Retry" }));
    await ready("open-interest");
  });

  it("speaks Japanese", async () => {
    stack();
    await act(() => activateLocale("ja"));
    renderApp("/marketData?exchange=binance&symbol=BTCUSDT&period=1d");
    await ready("funding-rate");
    expect(screen.getByRole("heading", { name: "マーケットデータ", level: 1 })).toBeTruthy();
    expect(
      within(screen.getByTestId("period-picker")).getByRole("button", { name: "1日" }).getAttribute("aria-pressed"),
    ).toBe("true");
    const chart = screen.getByTestId("chart-funding-rate");
    act(() => chart.focus());
    fireEvent.keyDown(chart, { key: "ArrowLeft" });
    expect(within(chart).getByTestId("tooltip").textContent).toContain("2026/11/20");
  });
});
