import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { queryClient } from "~/api/queries";
import { SUBPAGE_KEYS } from "~/components/Nav";
import { renderAt } from "~/features/auth/testing/render";
import { resetMemberSync } from "~/features/dashboard/sync";
import { fakeApi, jsonResponse, member, type ApiCall } from "~/features/dashboard/testing/fake-api";
import { resetSession } from "~/lib/session";
import { csvField, parseCsv, toCsv } from "./csv";
import { chooseSubPage, HistoryScreen, rangeOf } from "./History";

// jsdom has no layout: the history tables' scroll boxes report a size so the virtualizer renders rows.
const sizes = { clientHeight: 600, clientWidth: 1000, offsetHeight: 600, offsetWidth: 1000 } as const;
const saved = new Map<string, PropertyDescriptor | undefined>();
beforeAll(() => {
  for (const [k, v] of Object.entries(sizes)) {
    const proto = k.startsWith("offset") ? HTMLElement.prototype : Element.prototype;
    saved.set(k, Object.getOwnPropertyDescriptor(proto, k));
    Object.defineProperty(proto, k, {
      configurable: true,
      get(this: HTMLElement) {
        return this.classList?.contains("history-table-scroll") ? v : 0;
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

beforeEach(() => {
  resetSession();
  resetMemberSync();
  queryClient.clear();
});
afterEach(() => {
  resetSession();
  vi.restoreAllMocks();
});

describe("csv", () => {
  it("quotes only what needs it and reads back what it wrote", () => {
    expect(csvField("0.0400")).toBe("0.0400");
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    const text = toCsv(["Time", "Symbol"], [["2026-11-25T00:00:00.000Z", "ETH-USDT"], ["x\ny", 'q"']]);
    expect(text).toBe('Time,Symbol\r\n2026-11-25T00:00:00.000Z,ETH-USDT\r\n"x\ny","q"""\r\n');
    expect(parseCsv(text)).toEqual([["Time", "Symbol"], ["2026-11-25T00:00:00.000Z", "ETH-USDT"], ["x\ny", 'q"']]);
  });
});

describe("sub-pages and ranges", () => {
  it("chooses the page asked, else the remembered one, else spot overview", () => {
    expect(chooseSubPage("funding_history", "spot_trading_details")).toBe("funding_history");
    expect(chooseSubPage(null, "futures_trading_details")).toBe("futures_trading_details");
    expect(chooseSubPage("nope", "nope")).toBe("spot_trading_overview");
  });

  it("turns a choice into a window", () => {
    const now = Date.UTC(2026, 10, 25, 12);
    expect(rangeOf("7d", "", "", now)).toEqual({ from: now - 7 * 86_400_000, to: 0 });
    const custom = rangeOf("custom", "2026-11-01", "2026-11-02", now)!;
    expect(custom.to - custom.from).toBe(2 * 86_400_000 - 1);
    expect(rangeOf("custom", "2026-11-03", "2026-11-02", now)).toBeNull();
    expect(rangeOf("custom", "", "2026-11-02", now)).toBeNull();
  });
});

const fills = [
  {
    exchange: "okx",
    trade_id: "t2",
    order_id: "o2",
    symbol: "ETH-USDT-SWAP",
    market_type: "SWAP",
    side: "SELL",
    price: "3001.5",
    qty: "0.1",
    quote_qty: "300.15",
    fee: "0.15",
    fee_asset: "USDT",
    realized_pnl: "-0.0207",
    maker: false,
    time: "2026-11-25T10:00:01Z",
  },
  {
    exchange: "binance",
    trade_id: "t1",
    order_id: "o1",
    symbol: "ETHUSDT",
    market_type: "SWAP",
    side: "BUY",
    price: "3000",
    qty: "0.1",
    quote_qty: "300",
    fee: "0.12",
    fee_asset: "USDT",
    realized_pnl: "0",
    maker: true,
    time: "2026-11-25T10:00:00Z",
  },
];

function api(calls: { list: ApiCall[] }) {
  return fakeApi({
    "GET /api/v1/me": () => jsonResponse(member),
    "GET /api/v1/me/preferences": () => jsonResponse({ sub_pages: {} }),
    "PUT /api/v1/me/preferences": () => jsonResponse({ sub_pages: {} }),
    "GET /api/v1/exchanges": () => jsonResponse({ exchanges: [] }),
    "GET /api/v1/history/fills": (c) => {
      calls.list.push(c);
      return jsonResponse({ fills, failed: [{ exchange: "bybit", code: "exchange_unavailable", detail: "x" }] });
    },
    "GET /api/v1/history/subtotal": () =>
      jsonResponse({
        total: { trades: 2, orders: 2, buys: 1, sells: 1, quote_volume: "600.15", fees: [{ asset: "USDT", amount: "0.27" }], realized_pnl: "-0.0207" },
        symbols: [],
        truncated: false,
        failed: [],
      }),
    "GET /api/v1/history/rpnl": () =>
      jsonResponse({ from: 0, to: 0, total_rpnl: "-0.0207", equity: "1000", exchanges: [], failed: [{ exchange: "okx", code: "exchange_unavailable", detail: "x" }] }),
  });
}

describe("history screen", () => {
  it("shows the fills with sub-totals, filters by side and exports the rows as CSV", async () => {
    const calls = { list: [] as ApiCall[] };
    api(calls);
    let blob: Blob | undefined;
    Object.assign(URL, { createObjectURL: (b: Blob) => ((blob = b), "blob:x"), revokeObjectURL: () => undefined });
    const click = vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(() => undefined);
    renderAt("/history?page=futures_trading_details", { "/history": HistoryScreen });

    const table = await screen.findByTestId("history-fills-table");
    await waitFor(() => expect(within(table).getAllByRole("row")).toHaveLength(3));
    const first = within(table).getAllByRole("row")[1]!;
    expect(first.querySelector('[data-column="symbol"]')!.textContent).toBe("ETH-USDT-SWAP");
    expect(first.querySelector('[data-column="pnl"]')!.getAttribute("data-csv")).toBe("-0.0207");
    expect(screen.getByTestId("subtotal-fees").textContent).toBe("0.27 USDT");
    expect(screen.getByTestId("subtotal-pnl").textContent).toBe("-0.0207");
    expect(screen.getByTestId("history-failures").textContent).toContain("bybit");
    expect(window.localStorage.getItem(SUBPAGE_KEYS.history)).toBe("futures_trading_details");
    expect(calls.list[0]!.query.get("market")).toBe("futures");

    fireEvent.click(screen.getByTestId("export-fills"));
    await waitFor(() => expect(click).toHaveBeenCalled());
    const rows = parseCsv((await blob!.text()).replace(/^\uFEFF/, ""));
    expect(rows[0]).toEqual(["Time", "Exchange", "Symbol", "Side", "Price", "Size", "Value", "Fee", "Fee asset", "Realized PnL", "Role"]);
    expect(rows.slice(1)).toEqual(
      [...table.querySelectorAll("tbody tr[data-row]")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.getAttribute("data-csv"))),
    );
    expect(rows[1]).toEqual(["2026-11-25T10:00:01.000Z", "okx", "ETH-USDT-SWAP", "SELL", "3001.5", "0.1", "300.15", "0.15", "USDT", "-0.0207", "taker"]);

    fireEvent.change(screen.getByTestId("filter-side"), { target: { value: "SELL" } });
    fireEvent.click(screen.getByTestId("filter-apply"));
    await waitFor(() => expect(calls.list.some((c) => c.query.get("side") === "SELL")).toBe(true));
  });
});
