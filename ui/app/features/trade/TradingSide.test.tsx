import { I18nProvider } from "@lingui/react";
import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { i18n } from "~/i18n";
import { capabilities, exchange, instrument, jsonResponse } from "~/test/fixtures";
import { StreamClient, type SocketLike } from "./stream";
import { setMember } from "~/lib/session";
import { resetMemberSync } from "~/features/dashboard/sync";
import { resetAlertAudio } from "./alerts";
import { clearToasts } from "./toasts";
import TradingSide from "./TradingSide";
import { queryClient } from "~/api/queries";
import type { ServiceGate } from "~/api/trading";

class FakeSocket implements SocketLike {
  readyState = 0;
  sent: Record<string, unknown>[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  send(data: string) {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }
  close() {
    this.readyState = 3;
    this.onclose?.({});
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  push(m: unknown) {
    act(() => this.onmessage?.({ data: JSON.stringify(m) }));
  }
}

type Call = { method: string; path: string; query: URLSearchParams; headers: Headers; body: unknown };

function fakeBff(routes: Record<string, (c: Call) => Response>) {
  const calls: Call[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (req: Request) => {
      const url = new URL(req.url);
      const text = await req.text();
      const c = { method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers, body: text ? JSON.parse(text) : undefined };
      calls.push(c);
      const h = routes[`${req.method} ${url.pathname}`];
      return h ? h(c) : jsonResponse({ title: "Not Found", status: 404, code: "not_found" }, 404);
    }),
  );
  return calls;
}

const ex = exchange({
  key: 100,
  slug: "reference",
  name: "Reference Exchange",
  capabilities: {
    ...capabilities,
    trading: { ...capabilities.trading, positionModes: ["ONE_WAY", "HEDGE"], marginModes: ["CROSS", "ISOLATED"] },
  },
});
const inst = instrument("BTCUSDT", "BTC", "USDT");
const active = { id: "a1", exchange: "reference", mode: "broker", name: "reference", status: "active" };

function setup() {
  const sockets: FakeSocket[] = [];
  const stream = new StreamClient("ws://x/api/v1/stream", () => {
    const s = new FakeSocket();
    sockets.push(s);
    return s;
  });
  const quote = { bid: "59999.9", ask: "60000.1", last: "60000" };
  render(
    <I18nProvider i18n={i18n}>
      <MemoryRouter>
        <TradingSide ex={ex} marketType="SWAP" instrument={inst} quote={quote} readQuote={() => quote} stream={stream} />
      </MemoryRouter>
    </I18nProvider>,
  );
  return { sockets, stream };
}

const base = {
  "GET /api/v1/leverage": () => jsonResponse({ leverage: "10", max_leverage: "50", margin_mode: "CROSS" }),
  "GET /api/v1/position-mode": () => jsonResponse({ mode: "ONE_WAY" }),
  "GET /api/v1/max-order-size": () => jsonResponse({ max_buy_qty: "1", max_sell_qty: "1" }),
  "GET /api/v1/positions": () => jsonResponse({ positions: [] }),
  "GET /api/v1/orders": () => jsonResponse({ orders: [] }),
  "GET /api/v1/algo-orders": () => jsonResponse({ orders: [] }),
  "GET /api/v1/fills": () => jsonResponse({ fills: [] }),
};

beforeEach(() => {
  document.cookie = "exhub_csrf=csrf-token; path=/";
});

afterEach(() => {
  vi.unstubAllGlobals();
  clearToasts();
  resetMemberSync();
});

// Generous bounds: the machine running the tests may be busy.
describe("trading side", { timeout: 30_000 }, () => {
  it("says the broker account is being set up, then opens the form when it is active", async () => {
    let accounts: unknown[] = [];
    fakeBff({ ...base, "GET /api/v1/accounts": () => jsonResponse({ accounts, broker: true }) });
    setup();
    const state = await screen.findByTestId("account-state");
    expect(state.dataset.state).toBe("provisioning");
    expect(state.textContent).toContain("Your Reference Exchange account is being set up.");
    accounts = [active];
    await screen.findByTestId("order-form", undefined, { timeout: 20_000 });
    expect(screen.queryByTestId("account-state")).toBeNull();
  });

  it("asks for an API key when the operator runs without broker accounts, and shows a failed account's reason", async () => {
    fakeBff({ ...base, "GET /api/v1/accounts": () => jsonResponse({ accounts: [], broker: false }) });
    setup();
    const state = await screen.findByTestId("account-state");
    expect(state.dataset.state).toBe("none");
    expect(within(state).getByRole("link", { name: "Link an API key" }).getAttribute("href")).toBe("/dashboard?page=accounts");
  });

  it("shows a failed broker account with its reason", async () => {
    fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [{ ...active, status: "failed", status_reason: "exchange refused the sub-account" }], broker: true }),
    });
    setup();
    const state = await screen.findByTestId("account-state");
    expect(state.dataset.state).toBe("failed");
    expect(state.textContent).toContain("exchange refused the sub-account");
  });

  it("shows leverage and margin mode, saves a new leverage within the instrument's maximum", async () => {
    let leverage = "10";
    const calls = fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/leverage": () => jsonResponse({ leverage, max_leverage: "50", margin_mode: "CROSS" }),
      "PUT /api/v1/leverage": (c) => {
        leverage = (c.body as { leverage: string }).leverage;
        return jsonResponse({ leverage, max_leverage: "50", margin_mode: "CROSS" });
      },
    });
    setup();
    const lev = await screen.findByTestId("leverage");
    await waitFor(() => expect(lev.textContent).toBe("10×"));
    expect(screen.getByTestId("margin-mode").textContent).toBe("Cross");
    expect(screen.getByTestId("position-mode").textContent).toBe("One-Way");
    fireEvent.click(lev);
    const input = (await screen.findByTestId("leverage-input", undefined, { timeout: 8000 })) as HTMLInputElement;
    fireEvent.change(input, { target: { value: "51" } });
    await act(async () => fireEvent.click(screen.getByTestId("leverage-save")));
    expect(await screen.findByText("Choose a leverage from 1 to 50.")).toBeTruthy();
    fireEvent.change(input, { target: { value: "20" } });
    await act(async () => fireEvent.click(screen.getByTestId("leverage-save")));
    await screen.findByText("Setting successful!");
    const put = calls.find((c) => c.method === "PUT" && c.path === "/api/v1/leverage")!;
    expect(put.body).toEqual({ exchange: "reference", symbol: "BTCUSDT", leverage: "20", margin_mode: "CROSS" });
    expect(put.headers.get("X-CSRF-Token")).toBe("csrf-token");
    await waitFor(() => expect(screen.getByTestId("leverage").textContent).toBe("20×"));
  });

  it("switches to hedge mode and the form offers Open/Close Long/Short", async () => {
    let mode = "ONE_WAY";
    fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/position-mode": () => jsonResponse({ mode }),
      "PUT /api/v1/position-mode": (c) => {
        mode = (c.body as { mode: string }).mode;
        return jsonResponse({ mode });
      },
    });
    setup();
    const btn = await screen.findByTestId("position-mode");
    await waitFor(() => expect(btn.textContent).toBe("One-Way"));
    fireEvent.click(btn);
    const dialog = await screen.findByTestId("position-mode-form", undefined, { timeout: 8000 });
    fireEvent.click(within(dialog).getByLabelText(/^Hedge/));
    await act(async () => fireEvent.click(within(dialog).getByRole("button", { name: "Confirm" })));
    await waitFor(() => expect(screen.getByTestId("position-mode").textContent).toBe("Hedge"));
    expect(screen.getByTestId("side-buy").textContent).toBe("Open Long");
  });

  it("keeps the available balance from the private stream and re-reads open orders on stream changes", async () => {
    let orders: unknown[] = [];
    const calls = fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/orders": () => jsonResponse({ orders }),
    });
    const { sockets } = setup();
    await screen.findByTestId("order-form");
    await waitFor(() => expect(sockets.length).toBe(1));
    const ws = sockets[0]!;
    act(() => ws.open());
    await waitFor(() => expect(ws.sent.some((m) => m.channel === "account" && m.exchange === "reference")).toBe(true));
    const sub = ws.sent.find((m) => m.channel === "account")!;
    // A private subscription names only the channel and the exchange.
    expect(Object.keys(sub).sort()).toEqual(["channel", "exchange", "id", "op"]);
    ws.push({ type: "snapshot", channel: "account", exchange: "reference", seq: 1, orders: [], balances: [{ asset: "USDT", wallet: "WALLET_TYPE_TRADING", available: "500" }] });
    await waitFor(() => expect(screen.getByTestId("available").textContent).toContain("500"));
    ws.push({ type: "balance", channel: "account", exchange: "reference", seq: 2, prevSeq: 1, balance: { asset: "USDT", wallet: "WALLET_TYPE_TRADING", available: "420.5" } });
    await waitFor(() => expect(screen.getByTestId("available").textContent).toContain("420.5"));

    fireEvent.click(screen.getByRole("tab", { name: "Open orders" }));
    await screen.findByText("No open orders.");
    const before = calls.filter((c) => c.path === "/api/v1/orders").length;
    orders = [{ id: "j9", exchange: "reference", market_type: "SWAP", symbol: "BTCUSDT", side: "BUY", type: "LIMIT", status: "open", price: "59000", qty: "0.01" }];
    ws.push({ type: "order", channel: "account", exchange: "reference", seq: 3, prevSeq: 2, order: { orderId: "1", status: "ORDER_STATUS_NEW" } });
    const table = await screen.findByTestId("open-orders-table");
    await within(table).findByText("59,000", undefined, { timeout: 5000 });
    expect(calls.filter((c) => c.path === "/api/v1/orders").length).toBeGreaterThan(before);

    // resyncing: everything is read again from the API until the next snapshot.
    const reads = calls.filter((c) => c.path === "/api/v1/orders").length;
    ws.push({ type: "status", channel: "account", exchange: "reference", state: "resyncing", reason: "stream_lost" });
    await waitFor(() => expect(calls.filter((c) => c.path === "/api/v1/orders").length).toBeGreaterThan(reads));
    ws.push({ type: "snapshot", channel: "account", exchange: "reference", seq: 1, orders: [], balances: [{ asset: "USDT", wallet: "WALLET_TYPE_TRADING", available: "400" }] });
    await waitFor(() => expect(screen.getByTestId("available").textContent).toContain("400"));

    // A hole in the sequence asks for a fresh snapshot.
    const subs = ws.sent.filter((m) => m.op === "subscribe" && m.channel === "account").length;
    ws.push({ type: "order", channel: "account", exchange: "reference", seq: 9, prevSeq: 7, order: { orderId: "1" } });
    await waitFor(() => expect(ws.sent.filter((m) => m.op === "subscribe" && m.channel === "account").length).toBe(subs + 1));
  });

  it("shows why trading is gated, with links to fix it, instead of the order form", async () => {
    let gates: ServiceGate[] = [
      { service: "trading", required: ["two_factor", "kyc"], missing: ["two_factor", "kyc"], code: "two_factor_required" },
      { service: "withdraw", required: [], missing: [] },
    ];
    fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/service-gates": () => jsonResponse({ exchange: "reference", services: gates }),
    });
    setup();
    const gate = await screen.findByTestId("trading-gate", undefined, { timeout: 20_000 });
    expect(gate.dataset.code).toBe("two_factor_required");
    expect(gate.textContent).toContain("Trading on Reference Exchange needs two-factor authentication.");
    expect(gate.textContent).toContain("Trading on Reference Exchange needs a verified identity (KYC).");
    expect(within(gate).getByRole("link", { name: "Turn on Google Authenticator" }).getAttribute("href")).toBe("/dashboard?page=security");
    expect(within(gate).getByRole("link", { name: "Verify your identity" }).getAttribute("href")).toBe("/dashboard?page=profile");
    expect(screen.queryByTestId("order-form")).toBeNull();
    // The account tabs stay: positions can still be seen and closed.
    expect(screen.getByTestId("account-tabs")).toBeTruthy();
    // Once the member has both, the form is back (gates are read again, e.g. on focus).
    gates = [{ service: "trading", required: ["two_factor", "kyc"], missing: [] }];
    await act(async () => {
      await queryClient.invalidateQueries({ queryKey: ["trading", "service-gates"] });
    });
    await screen.findByTestId("order-form", undefined, { timeout: 20_000 });
    expect(screen.queryByTestId("trading-gate")).toBeNull();
  });

  it("shows a position's break-even price and margin ratio", async () => {
    fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/positions": () =>
        jsonResponse({
          positions: [
            { symbol: "BTCUSDT", position_side: "LONG", qty: "0.02", entry_price: "60000", break_even_price: "60060", mark_price: "61000", margin: "120", margin_ratio: "0.031549" },
            { symbol: "BTCUSDT", position_side: "SHORT", qty: "0.01", entry_price: "62000", mark_price: "61000", margin: "60", margin_ratio: "0.85" },
          ],
        }),
    });
    setup();
    const pos = await screen.findByTestId("positions-table");
    await within(pos).findByText("60,060");
    expect(within(pos).getByRole("columnheader", { name: "Break-even price" })).toBeTruthy();
    expect(within(pos).getByRole("columnheader", { name: /Margin ratio/ })).toBeTruthy();
    expect(within(pos).getByText("3.15%")).toBeTruthy();
    expect(within(pos).getByText("85%").className).toBe("down");
  });

  it("amends and cancels an open order, and closes a position at market", async () => {
    let orders = [{ id: "j9", exchange: "reference", market_type: "SWAP", symbol: "BTCUSDT", side: "BUY", type: "LIMIT", status: "open", price: "59000", qty: "0.01" }];
    let positions = [{ symbol: "BTCUSDT", position_side: "NET", qty: "0.02", entry_price: "60000", mark_price: "61000", unrealized_pnl: "20", margin: "120" }];
    const calls = fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/orders": () => jsonResponse({ orders }),
      "GET /api/v1/positions": () => jsonResponse({ positions }),
      "PATCH /api/v1/orders/j9": (c) => {
        orders = [{ ...orders[0]!, ...(c.body as object) }];
        return jsonResponse(orders[0]);
      },
      "DELETE /api/v1/orders/j9": () => {
        const o = { ...orders[0]!, status: "cancelled" };
        orders = [];
        return jsonResponse(o);
      },
      "POST /api/v1/orders": () =>
        jsonResponse({ id: "l1", exchange: "reference", market_type: "SWAP", symbol: "BTCUSDT", side: "SELL", type: "LIMIT", status: "open", price: "61500", qty: "0.02" }, 201),
      "POST /api/v1/positions/close": () => {
        positions = [];
        return jsonResponse({ id: "c1", exchange: "reference", market_type: "SWAP", symbol: "BTCUSDT", type: "MARKET", status: "filled" }, 201);
      },
    });
    setup();
    // Positions first on futures.
    const pos = await screen.findByTestId("positions-table");
    await within(pos).findByText("0.02");
    expect(within(pos).getByText("16.67%")).toBeTruthy(); // 20 / 120, half up
    // Close at a limit price: a reduce-only limit on the other side, checked against the tick first.
    fireEvent.click(within(pos).getByTestId("close-limit"));
    const limitPrice = within(pos).getByTestId("close-limit-price") as HTMLInputElement;
    expect(limitPrice.value).toBe("61000");
    fireEvent.change(limitPrice, { target: { value: "61500.05" } });
    await act(async () => fireEvent.click(within(pos).getByTestId("close-limit-send")));
    expect(await within(pos).findByText("The price must be a multiple of 0.1.")).toBeTruthy();
    fireEvent.change(limitPrice, { target: { value: "61500" } });
    await act(async () => fireEvent.keyDown(limitPrice, { key: "Enter" }));
    await screen.findByText("Order successfully");
    const limitClose = calls.find((c) => c.method === "POST" && c.path === "/api/v1/orders")!;
    expect(limitClose.body).toEqual({
      exchange: "reference",
      market_type: "SWAP",
      symbol: "BTCUSDT",
      side: "SELL",
      type: "LIMIT",
      time_in_force: "GTC",
      price: "61500",
      qty: "0.02",
      reduce_only: true,
    });
    expect(limitClose.headers.get("Idempotency-Key")).toBeTruthy();
    act(() => clearToasts());

    // A double click sends one close.
    await act(async () => {
      fireEvent.click(within(pos).getByTestId("close-position"));
      fireEvent.click(within(pos).getByTestId("close-position"));
    });
    await screen.findByText("Order successfully");
    expect(calls.filter((c) => c.method === "POST" && c.path === "/api/v1/positions/close")).toHaveLength(1);
    const close = calls.find((c) => c.method === "POST" && c.path === "/api/v1/positions/close")!;
    expect(close.body).toEqual({ exchange: "reference", symbol: "BTCUSDT", position_side: "NET" });
    expect(close.headers.get("Idempotency-Key")).toBeTruthy();
    await within(pos).findByText("No open positions.");

    fireEvent.click(screen.getByRole("tab", { name: "Open orders" }));
    const table = await screen.findByTestId("open-orders-table");
    await within(table).findByText("59,000");
    fireEvent.click(within(table).getByTestId("amend"));
    fireEvent.change(within(table).getByTestId("amend-price"), { target: { value: "59000.05" } });
    await act(async () => fireEvent.click(within(table).getByTestId("amend-save")));
    expect(await within(table).findByText("The price must be a multiple of 0.1.")).toBeTruthy();
    fireEvent.change(within(table).getByTestId("amend-price"), { target: { value: "59100" } });
    await act(async () => fireEvent.keyDown(within(table).getByTestId("amend-price"), { key: "Enter" }));
    await screen.findByText("Modified successfully!");
    const patch = calls.find((c) => c.method === "PATCH")!;
    expect(patch.body).toEqual({ price: "59100" });
    await within(table).findByText("59,100");
    await act(async () => fireEvent.click(within(table).getByTestId("cancel-order")));
    await screen.findByText("Order Cancelled");
    await within(table).findByText("No open orders.");
  });
  it("says a cancellation is unconfirmed, never done, when the exchange's answer was lost (202)", async () => {
    const orders = [{ id: "j9", exchange: "reference", market_type: "SWAP", symbol: "BTCUSDT", side: "BUY", type: "LIMIT", status: "open", price: "59000", qty: "0.01" }];
    const calls = fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/orders": () => jsonResponse({ orders }),
      "DELETE /api/v1/orders": () => jsonResponse({ orders }, 202),
      "DELETE /api/v1/orders/j9": () => jsonResponse(orders[0], 202),
    });
    setup();
    fireEvent.click(await screen.findByRole("tab", { name: "Open orders" }));
    const table = await screen.findByTestId("open-orders-table");
    await within(table).findByText("59,000");
    const unconfirmed = "Cancellation sent: the exchange has not confirmed it yet. Open orders are being checked.";
    await act(async () => fireEvent.click(within(table).getByTestId("cancel-order")));
    await screen.findByText(unconfirmed);
    act(() => clearToasts());
    const reads = calls.filter((c) => c.method === "GET" && c.path === "/api/v1/orders").length;
    await act(async () => fireEvent.click(screen.getByTestId("cancel-all")));
    await screen.findByText(unconfirmed);
    expect(screen.queryByText("Order Cancelled")).toBeNull();
    const all = calls.find((c) => c.method === "DELETE" && c.path === "/api/v1/orders")!;
    expect(Object.fromEntries(all.query)).toMatchObject({ exchange: "reference", market_type: "SWAP" });
    // The open orders are read again.
    await waitFor(() => expect(calls.filter((c) => c.method === "GET" && c.path === "/api/v1/orders").length).toBeGreaterThan(reads));
  });

  it("sets TP/SL on a position as conditional orders that close it", async () => {
    const positions = [{ symbol: "BTCUSDT", position_side: "LONG", qty: "0.02", entry_price: "60000", mark_price: "61000", unrealized_pnl: "20", margin: "120" }];
    const calls = fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/positions": () => jsonResponse({ positions }),
      "POST /api/v1/algo-orders": (c) => jsonResponse({ id: `a${calls.length}`, exchange: "reference", market_type: "SWAP", symbol: "BTCUSDT", type: (c.body as { type: string }).type, status: "waiting" }, 201),
    });
    setup();
    const pos = await screen.findByTestId("positions-table");
    await within(pos).findByText("0.02");
    fireEvent.click(within(pos).getByTestId("position-tpsl-open"));
    const tp = await screen.findByTestId("position-tp", undefined, { timeout: 8000 });
    // A long's take-profit under its price is refused.
    fireEvent.change(tp, { target: { value: "60500" } });
    await act(async () => fireEvent.click(screen.getByTestId("position-tpsl-save")));
    expect(await screen.findByText("The take-profit price must be greater than the position's price.")).toBeTruthy();
    fireEvent.change(tp, { target: { value: "65000" } });
    fireEvent.change(screen.getByTestId("position-sl"), { target: { value: "58000" } });
    await act(async () => fireEvent.click(screen.getByTestId("position-tpsl-save")));
    await waitFor(() => expect(screen.queryByTestId("position-tpsl")).toBeNull());
    const algos = calls.filter((c) => c.method === "POST" && c.path === "/api/v1/algo-orders");
    expect(algos.map((c) => c.body)).toEqual([
      { exchange: "reference", market_type: "SWAP", symbol: "BTCUSDT", side: "SELL", type: "TAKE_PROFIT_MARKET", trigger_price: "65000", trigger_price_type: "LAST", close_position: true, position_side: "LONG" },
      { exchange: "reference", market_type: "SWAP", symbol: "BTCUSDT", side: "SELL", type: "STOP_MARKET", trigger_price: "58000", trigger_price_type: "LAST", close_position: true, position_side: "LONG" },
    ]);
    expect(algos[0]!.headers.get("Idempotency-Key")).not.toBe(algos[1]!.headers.get("Idempotency-Key"));
  });

  it("lists conditional orders beside the open orders, with their type and a side even when the exchange gives none", async () => {
    fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/algo-orders": () =>
        jsonResponse({
          orders: [
            { id: "a1", exchange: "reference", market_type: "SWAP", symbol: "BTCUSDT", side: "", type: "TAKE_PROFIT_MARKET", status: "waiting", trigger_price: "65000" },
          ],
        }),
    });
    setup();
    fireEvent.click(await screen.findByRole("tab", { name: "Open orders" }));
    const algo = await screen.findByTestId("algo-orders-table");
    const row = within(algo).getAllByRole("row")[1]!;
    expect(within(row).getByText("Take Profit Market")).toBeTruthy();
    expect(row.querySelector('[data-column="side"]')!.textContent).toBe("—");
    expect(within(row).getByText("65,000")).toBeTruthy();
  });
  it("saves the sound alert preferences, and a fill of the member's plays its alert", async () => {
    setMember({ id: "m1", email_verified: true, phone_verified: false, aal: "aal1", two_factor: { totp: false, lookup_secret: false } });
    let doc: Record<string, unknown> = {};
    let version = 3;
    const calls = fakeBff({
      ...base,
      "GET /api/v1/accounts": () => jsonResponse({ accounts: [active], broker: true }),
      "GET /api/v1/me/preferences": () => jsonResponse({ version, preferences: doc }),
      "PUT /api/v1/me/preferences": (c) => {
        const b = c.body as { version: number; preferences: Record<string, unknown> };
        expect(b.version).toBe(version);
        doc = b.preferences;
        version++;
        return jsonResponse({ version, preferences: doc });
      },
    });
    const played: number[] = [];
    const audio = {
      currentTime: 0,
      destination: {},
      createOscillator: () => ({ frequency: { value: 0 }, connect: () => undefined, start: () => played.push(1), stop: () => undefined }),
      createGain: () => ({ gain: { value: 1, setValueAtTime: () => undefined, exponentialRampToValueAtTime: () => undefined }, connect: () => undefined }),
    };
    vi.stubGlobal("AudioContext", function AudioContext() {
      return audio;
    });
    resetAlertAudio();
    const { sockets } = setup();
    await screen.findByTestId("order-form");
    fireEvent.click(screen.getByTestId("trade-preferences"));
    const form = await screen.findByTestId("preferences-form", undefined, { timeout: 8000 });
    // Unset alerts are on, the volume 0.5.
    expect((within(form).getByTestId("alert-filled") as HTMLInputElement).checked).toBe(true);
    expect((within(form).getByTestId("sound-volume") as HTMLInputElement).value).toBe("0.5");
    fireEvent.click(within(form).getByTestId("alert-order"));
    fireEvent.change(within(form).getByTestId("sound-volume"), { target: { value: "0.8" } });
    await act(async () => fireEvent.click(within(form).getByRole("button", { name: "Confirm" })));
    await screen.findByText("Setting successful!");
    expect(doc).toEqual({ alerts: { filled_order: true, trading_volume: true, order: false }, sound_volume: "0.8" });
    expect(calls.some((c) => c.method === "PUT" && c.headers.get("X-CSRF-Token") === "csrf-token")).toBe(true);

    // A fill plays the trading volume alert; a new order (its alert now off) plays nothing.
    await waitFor(() => expect(sockets.length).toBe(1));
    const ws = sockets[0]!;
    act(() => ws.open());
    ws.push({ type: "snapshot", channel: "account", exchange: "reference", seq: 1, orders: [], balances: [] });
    ws.push({ type: "order", channel: "account", exchange: "reference", seq: 2, prevSeq: 1, order: { orderId: "1", status: "ORDER_STATUS_NEW" } });
    expect(played).toHaveLength(0);
    ws.push({ type: "fill", channel: "account", exchange: "reference", seq: 3, prevSeq: 2, fill: { tradeId: "t1", qty: "0.01" } });
    expect(played).toHaveLength(1);
    resetAlertAudio();
  });
});
