import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { setApiFetch } from "~/api/client";
import { FAVORITES_KEY } from "~/lib/favorites";
import { exchange, fakeApi, instrument, jsonResponse, ticker } from "~/test/fixtures";
import { renderApp } from "~/test/render";

// The page's stream connection, replaced by one that records subscriptions
// and lets the test push ticker messages.
const stream = vi.hoisted(() => {
  type H = (m: { type: string; [k: string]: unknown }) => void;
  const subs = new Map<string, H>();
  return {
    subs,
    client: {
      subscribe(sub: { exchange: string; marketType: string; symbol: string }, h: H) {
        const k = `${sub.exchange}:${sub.marketType}:${sub.symbol}`;
        subs.set(k, h);
        return () => subs.delete(k);
      },
      onState(l: (s: string) => void) {
        l("open");
        return () => undefined;
      },
    },
  };
});
vi.mock("~/features/trade/stream", () => ({ sharedStream: () => stream.client }));

const N = 3000;
const swaps = Array.from({ length: N }, (_, i) => instrument(`C${i}USDT`, `C${i}`, "USDT"));
const swapTickers = swaps.map((s, i) => ticker(s.symbol, `${i + 1}.5`, i % 2 ? `-${i % 7}.1` : `${i % 5}.2`, `${(i * 7919) % 100000}`));

function api() {
  return fakeApi({
    "/api/v1/exchanges": () =>
      jsonResponse({
        exchanges: [
          exchange({ key: 1, slug: "binance", name: "Binance" }),
          exchange({ key: 3, slug: "bybit", name: "Bybit", status: "coming_soon", pluginState: "none" }),
        ],
      }),
    "/api/v1/instruments": (u) =>
      jsonResponse({
        instruments: u.searchParams.get("type") === "SPOT" ? [instrument("ETHUSDT", "ETH", "USDT", "SPOT")] : swaps,
      }),
    "/api/v1/tickers": (u) =>
      jsonResponse({ tickers: u.searchParams.get("type") === "SPOT" ? [ticker("ETHUSDT", "3000", "1", "5", "SPOT")] : swapTickers }),
  });
}

const bodyRows = () => [...document.querySelectorAll<HTMLElement>(".markets-body-row")];

beforeEach(() => stream.subs.clear());

// jsdom has no layout: the list's scroll box reports a size so the
// virtualizer renders the rows on screen.
const sizes = { clientHeight: 600, clientWidth: 1000, offsetHeight: 600, offsetWidth: 1000 } as const;
const saved = new Map<string, PropertyDescriptor | undefined>();
beforeAll(() => {
  for (const [k, v] of Object.entries(sizes)) {
    const proto = k.startsWith("offset") ? HTMLElement.prototype : Element.prototype;
    saved.set(k, Object.getOwnPropertyDescriptor(proto, k));
    Object.defineProperty(proto, k, {
      configurable: true,
      get(this: HTMLElement) {
        return this.dataset?.testid === "markets-scroll" ? v : 0;
      },
    });
  }
});
afterAll(() => {
  for (const [k, d] of saved) {
    const proto = k.startsWith("offset") ? HTMLElement.prototype : Element.prototype;
    if (d) Object.defineProperty(proto, k, d);
    else delete (proto as unknown as Record<string, unknown>)[k];
  }
});

describe("markets page", () => {
  it("lists thousands of markets virtualized, sorted by volume, with search and tabs", async () => {
    const a = api();
    setApiFetch(a.fetch);
    renderApp("/market");
    await screen.findByTestId("markets-table");
    await waitFor(() => expect(document.title).toBe("exhub | Markets"));
    expect(screen.getByText(`${N} markets`)).toBeTruthy();
    // Only the rows on screen exist.
    expect(bodyRows().length).toBeGreaterThan(5);
    expect(bodyRows().length).toBeLessThan(60);
    // Coming-soon exchanges are not asked for markets.
    expect(a.calls.some((c) => c.includes("exchange=bybit"))).toBe(false);
    // Default order: 24h quote volume, highest first (compared as decimals).
    const vols = bodyRows().map((r) => r.querySelector<HTMLElement>(".markets-cell--quoteVolume24h")!.dataset.value!);
    expect(vols.map(Number)).toEqual([...vols.map(Number)].sort((x, y) => y - x));

    // Sort by last price ascending, then descending.
    fireEvent.click(screen.getByRole("button", { name: "Last price" }));
    await waitFor(() => expect(bodyRows()[0]!.dataset.symbol).toBeDefined());
    const header = screen.getByRole("button", { name: "Last price" }).closest("[role=columnheader]")!;
    const first = () => bodyRows()[0]!.dataset.symbol;
    if (header.getAttribute("aria-sort") === "descending") {
      expect(first()).toBe(`C${N - 1}USDT`);
      fireEvent.click(screen.getByRole("button", { name: "Last price" }));
    }
    await waitFor(() => expect(header.getAttribute("aria-sort")).toBe("ascending"));
    expect(first()).toBe("C0USDT");
    // Every column sorts.
    for (const name of ["Market", "Exchange", "24h change", "24h high", "24h low", "24h volume (quote)"]) {
      fireEvent.click(screen.getByRole("button", { name }));
      expect(screen.getByRole("button", { name }).closest("[role=columnheader]")!.getAttribute("aria-sort")).not.toBe("none");
    }

    fireEvent.change(screen.getByRole("searchbox", { name: "Search markets" }), { target: { value: "c2999" } });
    await waitFor(() => expect(bodyRows().map((r) => r.dataset.symbol)).toEqual(["C2999USDT"]));

    fireEvent.click(screen.getByRole("tab", { name: "Spot" }));
    fireEvent.change(screen.getByRole("searchbox", { name: "Search markets" }), { target: { value: "" } });
    await waitFor(() => expect(bodyRows().map((r) => r.dataset.symbol)).toEqual(["ETHUSDT"]));
    expect(within(bodyRows()[0]!).getByRole("link").getAttribute("href")).toBe("/spot/binance/ETHUSDT");
  }, 30_000);

  it("keeps favorites locally and filters by them", async () => {
    setApiFetch(api().fetch);
    renderApp("/market?tab=spot");
    await screen.findByTestId("markets-table");
    fireEvent.click(await screen.findByRole("button", { name: "Add ETHUSDT to favorites" }));
    expect(JSON.parse(localStorage.getItem(FAVORITES_KEY)!)).toEqual(["binance:SPOT:ETHUSDT"]);
    expect(screen.getByRole("button", { name: "Remove ETHUSDT from favorites" }).getAttribute("aria-pressed")).toBe("true");
    fireEvent.click(screen.getByRole("tab", { name: "Futures" }));
    fireEvent.click(screen.getByRole("checkbox", { name: "Favorites only" }));
    expect(await screen.findByText("No markets match.")).toBeTruthy();
    fireEvent.click(screen.getByRole("tab", { name: "Spot" }));
    await waitFor(() => expect(bodyRows().map((r) => r.dataset.symbol)).toEqual(["ETHUSDT"]));
  });

  it("subscribes the visible rows and colours live ticks", async () => {
    setApiFetch(api().fetch);
    renderApp("/market?tab=spot");
    await screen.findByTestId("markets-table");
    await waitFor(() => expect(stream.subs.has("binance:SPOT:ETHUSDT")).toBe(true));
    const push = (last: string) =>
      act(async () => {
        stream.subs.get("binance:SPOT:ETHUSDT")!({ type: "ticker", channel: "ticker", ticker: { last } });
        await new Promise((r) => requestAnimationFrame(() => r(null)));
      });
    const cell = () => bodyRows()[0]!.querySelector<HTMLElement>("[data-testid=last]")!;
    await push("3001");
    expect(cell().textContent).toBe("3,001.0");
    expect(cell().dataset.direction).toBe("up");
    await push("3001");
    expect(cell().dataset.direction).toBe("up");
    await push("2999.9");
    expect(cell().dataset.direction).toBe("down");
    expect(cell().className).toContain("tick-down");
  });

  it("shows a network anomaly with retry when the API fails", async () => {
    let fail = true;
    const a = api();
    setApiFetch(async (req) => {
      if (fail && new URL(req.url).pathname === "/api/v1/instruments") throw new TypeError("Failed to fetch");
      return a.fetch(req);
    });
    renderApp("/market");
    const alert = await screen.findByText("The markets could not be loaded. Check your connection and try again.");
    expect(screen.getByTestId("network-anomaly")).toBeTruthy();
    fail = false;
    fireEvent.click(within(alert.closest("[role=alert]") as HTMLElement).getByRole("button", { name: "Retry" }));
    await screen.findByTestId("markets-table");
    await waitFor(() => expect(screen.queryByTestId("network-anomaly")).toBeNull());
  });
});
