import { I18nProvider } from "@lingui/react";
import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { i18n } from "~/i18n";
import { activateLocale } from "~/i18n";
import { instrument, jsonResponse } from "~/test/fixtures";
import { OrderForm, type OrderFormProps } from "./OrderForm";
import { clearToasts, TradeToasts } from "./toasts";

type Call = { method: string; path: string; query: URLSearchParams; headers: Headers; body: unknown };
type Route = (c: Call) => Response | Promise<Response>;

// A fake BFF behind globalThis.fetch (the trading API goes through apiFetch).
function fakeBff(routes: Record<string, Route>) {
  const calls: Call[] = [];
  const fetch = vi.fn(async (req: Request) => {
    const url = new URL(req.url);
    const text = await req.text();
    const c: Call = { method: req.method, path: url.pathname, query: url.searchParams, headers: req.headers, body: text ? JSON.parse(text) : undefined };
    calls.push(c);
    const h = routes[`${req.method} ${url.pathname}`];
    if (!h) return jsonResponse({ title: "Not Found", status: 404, code: "not_found" }, 404);
    return h(c);
  });
  vi.stubGlobal("fetch", fetch);
  return { calls, posts: () => calls.filter((c) => c.method === "POST") };
}

const maxSize = () => jsonResponse({ max_buy_qty: "0.0573", max_sell_qty: "0.04" });

function order(over: Record<string, unknown> = {}) {
  return {
    id: "j1",
    exchange: "reference",
    market_type: "SWAP",
    symbol: "BTCUSDT",
    side: "BUY",
    type: "LIMIT",
    status: "open",
    price: "60000",
    qty: "0.01",
    ...over,
  };
}

const caps = { orderTypes: ["LIMIT", "MARKET", "STOP_MARKET"], timeInForce: ["GTC", "POST_ONLY", "IOC", "FOK"], reduceOnly: true, tpsl: true, triggerPriceTypes: ["LAST", "MARK"] };

function renderForm(over: Partial<OrderFormProps> = {}) {
  const quote = { bid: "59999.9", ask: "60000.1", last: "60000" };
  const props: OrderFormProps = {
    exchange: "reference",
    marketType: "SWAP",
    instrument: instrument("BTCUSDT", "BTC", "USDT"),
    caps,
    quote,
    readQuote: () => quote,
    balances: [{ asset: "USDT", wallet: "WALLET_TYPE_TRADING", available: "1234.5" }],
    hedge: false,
    leverage: "10",
    marginMode: "CROSS",
    ...over,
  };
  return render(
    <I18nProvider i18n={i18n}>
      <MemoryRouter>
        <OrderForm {...props} />
        <TradeToasts />
      </MemoryRouter>
    </I18nProvider>,
  );
}

function type(testId: string, value: string) {
  fireEvent.change(screen.getByTestId(testId), { target: { value } });
}

async function submit() {
  await act(async () => {
    fireEvent.click(screen.getByTestId("order-submit"));
  });
}

beforeEach(() => {
  document.cookie = "exhub_csrf=csrf-token; path=/";
});

afterEach(() => {
  vi.unstubAllGlobals();
  clearToasts();
  document.cookie = "exhub_csrf=; Max-Age=0; path=/";
});

// Generous bounds: the machine running the tests may be busy.
describe("order form", { timeout: 30_000 }, () => {
  it("places a limit order with an Idempotency-Key and the CSRF header, then says so", async () => {
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => jsonResponse(order(), 201),
    });
    renderForm();
    type("order-price", "60000");
    type("order-size", "0.01");
    await submit();
    await screen.findByText("Order successfully");
    const [post] = bff.posts();
    expect(post!.path).toBe("/api/v1/orders");
    expect(post!.body).toEqual({
      exchange: "reference",
      market_type: "SWAP",
      symbol: "BTCUSDT",
      side: "BUY",
      type: "LIMIT",
      time_in_force: "GTC",
      price: "60000",
      qty: "0.01",
      margin_mode: "CROSS",
    });
    expect(post!.headers.get("Idempotency-Key")).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(post!.headers.get("X-CSRF-Token")).toBe("csrf-token");
    expect(screen.getByTestId("available").textContent).toContain("1,234.5");
    expect(screen.getByTestId("max-size").textContent).toContain("0.057");
  });

  it("enforces the instrument's rules before sending, with the spec's message for the minimum", async () => {
    const bff = fakeBff({ "GET /api/v1/max-order-size": maxSize });
    renderForm();
    type("order-price", "60000.05");
    type("order-size", "0.0005");
    await submit();
    expect(await screen.findByText("The price must be a multiple of 0.1.")).toBeTruthy();
    expect(screen.getByText("The size must be a multiple of 0.001.")).toBeTruthy();
    type("order-price", "60000");
    type("order-size", "0");
    await submit();
    expect(await screen.findByText("Enter a size.")).toBeTruthy();
    type("order-price", "1");
    type("order-size", "1");
    await submit();
    expect(await screen.findByText("The order value must be at least 5.")).toBeTruthy();
    type("order-price", "60000");
    type("order-size", "0.06");
    await submit();
    expect(await screen.findByText("The amount exceeds the balance")).toBeTruthy();
    expect(bff.posts()).toHaveLength(0);
  });

  it("sizes by percent of the maximum and by quote amount", async () => {
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => jsonResponse(order(), 201),
    });
    renderForm();
    type("order-price", "60000");
    type("order-size-mode", "percent");
    await screen.findByTestId("order-percent");
    await waitFor(() => expect(screen.getByTestId("max-size").textContent).toContain("0.057"));
    // The max is asked at the typed price once it settles.
    await waitFor(() => expect(bff.calls.some((c) => c.path === "/api/v1/max-order-size" && c.query.get("price") === "60000")).toBe(true));
    fireEvent.click(screen.getByRole("button", { name: "50%" }));
    await submit();
    await screen.findByText("Order successfully");
    expect((bff.posts()[0]!.body as { qty: string }).qty).toBe("0.028");

    type("order-size-mode", "quote");
    type("order-size", "1000");
    await submit();
    await waitFor(() => expect(bff.posts()).toHaveLength(2));
    expect((bff.posts()[1]!.body as { qty: string }).qty).toBe("0.016");
  });

  it("converts TP/SL from ROI %, change % and PnL and validates their side", async () => {
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => jsonResponse(order(), 201),
    });
    renderForm();
    type("order-price", "60000");
    type("order-size", "0.01");
    fireEvent.click(screen.getByLabelText("TP/SL"));
    await screen.findByTestId("order-tpsl");
    type("tp-method", "roi");
    type("order-tp", "50");
    type("sl-method", "pnl");
    type("order-sl", "12");
    await waitFor(() => expect(screen.getByTestId("tp-trigger").textContent).toContain("63000"));
    expect(screen.getByTestId("sl-trigger").textContent).toContain("58800");
    await submit();
    await screen.findByText("Order successfully");
    const body = bff.posts()[0]!.body as Record<string, unknown>;
    expect(body.take_profit).toEqual({ trigger_price: "63000", trigger_price_type: "LAST" });
    expect(body.stop_loss).toEqual({ trigger_price: "58800", trigger_price_type: "LAST" });

    // A take-profit price under a buy's price is refused with the spec's rule.
    type("tp-method", "price");
    type("order-tp", "59000");
    type("sl-method", "change");
    type("order-sl", "1");
    await submit();
    expect(await screen.findByText("The take-profit price must be greater than the order price.")).toBeTruthy();
    expect(bff.posts()).toHaveLength(1);
  });

  it("AI Price enters a buy at the best bid without a typed price", async () => {
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => jsonResponse(order(), 201),
    });
    renderForm();
    fireEvent.click(screen.getByLabelText("AI Price"));
    expect((await screen.findByTestId("ai-price")).textContent).toBe("59999.9");
    type("order-size", "0.01");
    await submit();
    await screen.findByText("Order successfully");
    expect((bff.posts()[0]!.body as { price: string }).price).toBe("59999.9");
    expect((bff.posts()[0]!.body as { price_match?: string }).price_match).toBeUndefined();
  });

  it("offers TP/SL on entry per market where the capabilities list it", async () => {
    fakeBff({ "GET /api/v1/max-order-size": maxSize });
    const view = renderForm({ caps: { ...caps, tpsl: false, tpslOnEntry: ["SWAP"] } });
    expect(await screen.findByLabelText("TP/SL")).toBeTruthy();
    view.unmount();
    renderForm({ marketType: "SPOT", caps: { ...caps, tpsl: true, tpslOnEntry: ["SWAP"] } });
    await screen.findByTestId("order-submit");
    expect(screen.queryByLabelText("TP/SL")).toBeNull();
  });

  it("constrains TP/SL on entry to the exchange's rules: limit entries only, both legs, last price", async () => {
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => jsonResponse(order({ market_type: "SPOT" }), 201),
    });
    // Binance spot: an OTOCO order list (a LIMIT entry, both legs, last price, market on trigger).
    const otoco = { marketType: "SPOT", orderTypes: ["LIMIT"], bothLegs: true, triggerPriceTypes: ["LAST"], limitPrice: false };
    const view = renderForm({ marketType: "SPOT", caps: { ...caps, tpslOnEntry: ["SPOT"], tpslOnEntryRules: [otoco] } });
    expect(await screen.findByLabelText("TP/SL")).toBeTruthy();
    expect(screen.getByText("This exchange takes a take-profit and a stop-loss together.")).toBeTruthy();
    // A market order takes none there: the box goes and says why.
    fireEvent.click(screen.getByTestId("kind-market"));
    await waitFor(() => expect(screen.queryByLabelText("TP/SL")).toBeNull());
    expect(screen.getByTestId("tpsl-limit-only").textContent).toBe("TP/SL on entry: limit orders only on this exchange.");
    fireEvent.click(screen.getByTestId("kind-limit"));
    fireEvent.click(await screen.findByLabelText("TP/SL"));
    const box = await screen.findByTestId("order-tpsl");
    const triggerType = within(box).getByLabelText("Trigger price type") as HTMLSelectElement;
    expect([...triggerType.options].map((o) => o.value)).toEqual(["LAST"]);
    type("order-price", "60000");
    type("order-size", "0.01");
    // One leg alone is refused before anything is sent.
    type("order-tp", "66000");
    await submit();
    expect(await screen.findByText("This exchange takes a take-profit and a stop-loss together: enter both.")).toBeTruthy();
    expect(bff.posts()).toHaveLength(0);
    type("order-sl", "57000");
    await submit();
    await screen.findByText("Order successfully");
    const body = bff.posts()[0]!.body as Record<string, unknown>;
    expect(body.type).toBe("LIMIT");
    expect(body.take_profit).toEqual({ trigger_price: "66000", trigger_price_type: "LAST" });
    expect(body.stop_loss).toEqual({ trigger_price: "57000", trigger_price_type: "LAST" });
    view.unmount();

    // OKX: limit and market entries, one leg alone, last or mark price.
    const attached = { marketType: "SWAP", orderTypes: ["LIMIT", "MARKET"], bothLegs: false, triggerPriceTypes: ["LAST", "MARK"], limitPrice: true };
    renderForm({ caps: { ...caps, tpslOnEntry: ["SWAP"], tpslOnEntryRules: [attached] } });
    fireEvent.click(await screen.findByTestId("kind-market"));
    fireEvent.click(await screen.findByLabelText("TP/SL"));
    const okxBox = await screen.findByTestId("order-tpsl");
    expect([...(within(okxBox).getByLabelText("Trigger price type") as HTMLSelectElement).options].map((o) => o.value)).toEqual(["LAST", "MARK"]);
    expect(screen.queryByText("This exchange takes a take-profit and a stop-loss together.")).toBeNull();
    expect(screen.queryByTestId("tpsl-limit-only")).toBeNull();
  });

  it("AI Price sends the exchange's own best-price order where the market has one", async () => {
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => jsonResponse(order({ price_match: "QUEUE" }), 201),
    });
    renderForm({ caps: { ...caps, priceMatch: ["SWAP"] } });
    fireEvent.click(screen.getByLabelText("AI Price"));
    expect(await screen.findByText("The exchange enters at its best bid when it takes the order.")).toBeTruthy();
    type("order-size", "0.01");
    await submit();
    await screen.findByText("Order successfully");
    const body = bff.posts()[0]!.body as { price?: string; price_match?: string; type: string };
    expect(body.type).toBe("LIMIT");
    expect(body.price_match).toBe("QUEUE");
    expect(body.price).toBeUndefined();
  });

  it("AI Price stays a limit at the top of the book on a market without the exchange's best-price order", async () => {
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => jsonResponse(order(), 201),
    });
    renderForm({ marketType: "SPOT", caps: { ...caps, priceMatch: ["SWAP"] } });
    fireEvent.click(screen.getByTestId("side-sell"));
    fireEvent.click(screen.getByLabelText("AI Price"));
    expect((await screen.findByTestId("ai-price")).textContent).toBe("60000.1");
    type("order-size", "0.01");
    await submit();
    await screen.findByText("Order successfully");
    const body = bff.posts()[0]!.body as { price?: string; price_match?: string };
    expect(body.price).toBe("60000.1");
    expect(body.price_match).toBeUndefined();
  });

  it("shows a 202 as pending until the order is known, never as failed", async () => {
    let status = "pending";
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => jsonResponse(order({ status: "pending" }), 202),
      "GET /api/v1/orders/j1": () => jsonResponse(order({ status })),
    });
    renderForm();
    type("order-price", "60000");
    type("order-size", "0.01");
    await submit();
    await screen.findByText("Order sent: waiting for the exchange to confirm it.");
    const pending = await screen.findByTestId("pending-orders");
    expect(within(pending).getByText(/Pending/)).toBeTruthy();
    expect(screen.queryByText("Order failed")).toBeNull();
    status = "open";
    await screen.findByText("Order successfully", undefined, { timeout: 5000 });
    await waitFor(() => expect(screen.queryByTestId("pending-orders")).toBeNull());
    expect(screen.queryByText("Order failed")).toBeNull();
    expect(bff.calls.filter((c) => c.path === "/api/v1/orders/j1").length).toBeGreaterThan(0);
  });

  it("says the balance is insufficient with deposit and transfer actions", async () => {
    fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () =>
        jsonResponse({ title: "Unprocessable", status: 422, code: "insufficient_funds", detail: "Your available balance is insufficient." }, 422),
    });
    renderForm();
    type("order-price", "60000");
    type("order-size", "0.01");
    await submit();
    const toasts = screen.getByTestId("trade-toasts");
    await within(toasts).findByText("Your available balance is insufficient.");
    expect(within(toasts).getByRole("link", { name: "Deposit" }).getAttribute("href")).toBe("/wallet?tab=deposit");
    expect(within(toasts).getByRole("link", { name: "Transfer" }).getAttribute("href")).toBe("/wallet?tab=transfer");
  });

  it("reuses the Idempotency-Key when the same order is sent again after a lost answer", async () => {
    let n = 0;
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => {
        n++;
        if (n === 1) throw new TypeError("network down");
        return jsonResponse(order(), 200);
      },
    });
    renderForm();
    type("order-price", "60000");
    type("order-size", "0.01");
    await submit();
    await screen.findAllByText("We could not confirm this order. Check Open orders before you submit it again.");
    expect(screen.queryByText("Order failed")).toBeNull();
    await submit();
    await screen.findByText("Order successfully");
    const [a, b] = bff.posts();
    expect(a!.headers.get("Idempotency-Key")).toBe(b!.headers.get("Idempotency-Key"));
    // A new order afterwards gets a new key.
    type("order-size", "0.02");
    await submit();
    await waitFor(() => expect(bff.posts()).toHaveLength(3));
    expect(bff.posts()[2]!.headers.get("Idempotency-Key")).not.toBe(a!.headers.get("Idempotency-Key"));
  });

  it("in hedge mode offers Open/Close Long/Short and sends the position side", async () => {
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/orders": () => jsonResponse(order(), 201),
    });
    renderForm({ hedge: true });
    expect(screen.getByTestId("side-buy").textContent).toBe("Open Long");
    expect(screen.getByTestId("side-sell").textContent).toBe("Open Short");
    fireEvent.click(screen.getByTestId("action-close"));
    expect(screen.getByTestId("side-buy").textContent).toBe("Close Short");
    fireEvent.click(screen.getByTestId("side-sell"));
    expect(screen.getByTestId("order-submit").textContent).toBe("Close Long");
    expect(screen.queryByLabelText("Reduce-Only")).toBeNull();
    // TP/SL belong to entries, not to closing orders.
    expect(screen.queryByLabelText("TP/SL")).toBeNull();
    type("order-price", "60000");
    type("order-size", "0.01");
    await submit();
    await screen.findByText("Order successfully");
    const body = bff.posts()[0]!.body as Record<string, unknown>;
    expect(body.side).toBe("SELL");
    expect(body.position_side).toBe("LONG");
  });

  it("sends a Stop Market as a conditional order with its trigger type", async () => {
    const bff = fakeBff({
      "GET /api/v1/max-order-size": maxSize,
      "POST /api/v1/algo-orders": () => jsonResponse(order({ type: "STOP_MARKET", status: "waiting" }), 201),
    });
    renderForm();
    expect(screen.getByLabelText("TP/SL")).toBeTruthy();
    fireEvent.click(screen.getByLabelText("Reduce-Only"));
    await waitFor(() => expect(screen.queryByLabelText("TP/SL")).toBeNull());
    fireEvent.click(screen.getByLabelText("Reduce-Only"));
    fireEvent.click(screen.getByTestId("kind-stop_market"));
    type("order-trigger", "61000");
    type("order-size", "0.01");
    fireEvent.click(screen.getByLabelText("Reduce-Only"));
    await submit();
    await screen.findByText("Order successfully");
    expect(bff.posts()[0]!.body).toEqual({
      exchange: "reference",
      market_type: "SWAP",
      symbol: "BTCUSDT",
      side: "BUY",
      type: "STOP_MARKET",
      trigger_price: "61000",
      trigger_price_type: "LAST",
      qty: "0.01",
      reduce_only: true,
      margin_mode: "CROSS",
    });
  });

  it("speaks Japanese", async () => {
    fakeBff({ "GET /api/v1/max-order-size": maxSize });
    await act(async () => {
      await activateLocale("ja");
    });
    renderForm();
    type("order-price", "60000");
    type("order-size", "0.0001");
    await submit();
    expect(await screen.findByText("最小数量を下回ることはできません")).toBeTruthy();
  });
});
