// End-to-end check of trading from the trade screen in Chromium through the
// edge of a running demo stack: a visitor sees Log In / Sign Up in place of the
// order form; a member registers (code from the demo inbox) and gets a demo
// broker account; on Binance's BTCUSDT perpetual they place a limit order
// from the form, see it in Open orders, amend it and cancel it, then place a
// market order, see the position and close it. The same member then trades in
// Japanese at a phone's width (the order form under the chart).
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import { grouped, orderFigures as figuresOf, press } from "./orders.mjs";
import { register, signIn, withBrowser as browser } from "./session.mjs";

const stamp = Date.now().toString(36);
const member = { email: `e2e-trading-${stamp}@example.com`, password: "Tr4!dEx9" };
const MARKET = "/futures/binance/BTCUSDT";
// The broker account is made in the background after sign-up.
const ACCOUNT_WAIT_MS = 120_000;

const withBrowser = (name, opts, fn) => browser(`trading-${name}`, { width: 1440, ...opts }, fn);
const login = signIn;

// A resting buy far under the market, a price to amend it to and sizes worth about twice the minimum notional.
const orderFigures = (page) => figuresOf(page, { exchange: "binance", type: "SWAP", symbol: "BTCUSDT" });

// Switches the page to Japanese with the language menu. The member's saved preferences (English) load in the
// background after sign-in; a choice made after sign-in is newer and must stay.
async function toJapanese(page) {
  const menu = page.getByTestId("language-menu").filter({ visible: true }).first();
  await menu.selectOption("ja");
  await page.waitForFunction(() => document.documentElement.lang === "ja");
  // The choice is saved with the member's preferences, so nothing loading later can put English back.
  await page.waitForFunction(async () => {
    const r = await fetch("/api/v1/me/preferences", { credentials: "same-origin" });
    return r.ok && (await r.json()).preferences?.language === "ja";
  }, null, { polling: 500 });
  assert.equal(await page.evaluate(() => document.documentElement.lang), "ja");
}

async function openMarket(page) {
  await page.goto(MARKET);
  await page.getByTestId("trade-screen").waitFor();
  await page.getByTestId("order-form").waitFor({ timeout: ACCOUNT_WAIT_MS });
}

// Places a limit buy from the form, sees it in Open orders, amends its price and cancels it.
async function limitRoundTrip(page, fig, text) {
  await press(page.getByTestId("kind-limit"));
  await press(page.getByTestId("side-buy"));
  await page.getByTestId("order-price").fill(fig.price);
  await page.getByTestId("order-size").fill(fig.qty);
  // Enter submits the form.
  await page.getByTestId("order-size").press("Enter");
  await page.getByTestId("trade-toasts").getByText(text.placed).first().waitFor();

  await press(page.getByRole("tab", { name: text.openOrders }));
  const table = page.getByTestId("open-orders-table");
  const row = table.locator("tbody tr", { has: page.locator('[data-column="price"]', { hasText: grouped(fig.price, text.locale) }) });
  await row.waitFor();
  await row.locator('[data-status="open"]').waitFor();

  await press(row.getByTestId("amend"));
  // The row being edited shows inputs in place of its price and size.
  const input = table.getByTestId("amend-price");
  await input.fill(fig.amended);
  await input.press("Enter");
  await page.getByTestId("trade-toasts").getByText(text.modified).first().waitFor();
  const amended = table.locator("tbody tr", { has: page.locator('[data-column="price"]', { hasText: grouped(fig.amended, text.locale) }) });
  await amended.waitFor();

  await press(amended.getByTestId("cancel-order"));
  await page.getByTestId("trade-toasts").getByText(text.cancelled).first().waitFor();
  await table.getByText(text.noOrders).waitFor();
}

// A market buy opens a long position of the size sent; closing it at market leaves none.
async function marketRoundTrip(page, fig, text) {
  await press(page.getByTestId("kind-market"));
  await press(page.getByTestId("side-buy"));
  await page.getByTestId("order-size").fill(fig.qtyMarket);
  await press(page.getByTestId("order-submit"));
  await page.getByTestId("trade-toasts").getByText(text.placed).first().waitFor();

  await press(page.getByRole("tab", { name: text.positions }));
  const table = page.getByTestId("positions-table");
  const row = table.locator("tbody tr", { has: page.locator('[data-column="symbol"]', { hasText: "BTCUSDT" }) });
  await row.waitFor();
  assert.equal((await row.locator('[data-column="qty"]').textContent()).trim(), grouped(fig.qtyMarket, text.locale));
  await press(row.getByTestId("close-position"));
  await table.getByText(text.noPositions).waitFor();
}

const en = {
  locale: "en",
  placed: "Order successfully",
  modified: "Modified successfully!",
  cancelled: "Order Cancelled",
  openOrders: "Open orders",
  positions: "Positions",
  noOrders: "No open orders.",
  noPositions: "No open positions.",
};
const ja = {
  locale: "ja",
  placed: "注文が完了しました",
  modified: "変更しました！",
  cancelled: "注文をキャンセルしました",
  openOrders: "未約定注文",
  positions: "ポジション",
  noOrders: "未約定の注文はありません。",
  noPositions: "保有ポジションはありません。",
};

test("a visitor sees Log In and Sign Up in place of the order form", async () => {
  await withBrowser("visitor", {}, async (page) => {
    await page.goto(MARKET);
    const gate = page.getByTestId("order-signed-out");
    await gate.waitFor();
    assert.equal(await page.getByTestId("order-form").count(), 0);
    const login = gate.getByRole("link", { name: "Log In" });
    assert.match(await login.getAttribute("href"), /^\/login\?return_to=%2Ffutures%2Fbinance%2FBTCUSDT/);
    await gate.getByRole("link", { name: "Sign Up" }).waitFor();
  });
});

test("a member places, amends and cancels a limit order, and opens and closes a position (English)", async () => {
  await withBrowser("en", {}, async (page) => {
    await register(page, member);
    await openMarket(page);
    const fig = await orderFigures(page);
    await limitRoundTrip(page, fig, en);
    await marketRoundTrip(page, fig, en);
  });
});

test("the same in Japanese at a phone's width, the order form under the chart", async () => {
  await withBrowser("ja", { locale: "ja", theme: "light", width: 390, height: 844 }, async (page) => {
    // Sign in (the login page in English), then switch the trade screen to Japanese with the language menu (the
    // member's choice is saved with their preferences).
    await page.goto("/");
    await page.evaluate(() => localStorage.setItem("exhub.locale", "en"));
    await login(page, member);
    await openMarket(page);
    await toJapanese(page);
    await page.getByRole("heading", { name: "注文", exact: true }).waitFor();
    const chart = await page.locator(".trade-chart-panel").boundingBox();
    const form = await page.getByTestId("order-panel").boundingBox();
    assert.ok(chart && form && form.y >= chart.y + chart.height - 1, "the order form is under the chart");
    assert.ok(form.width <= 390, "the form fits the phone's width");
    const fig = await orderFigures(page);
    await limitRoundTrip(page, fig, ja);
    await marketRoundTrip(page, fig, ja);
  });
});
