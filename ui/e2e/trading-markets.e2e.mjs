// End-to-end check of trading on every market kind from the trade screen in
// Chromium through the edge of a running demo stack, with one new member's
// demo broker accounts (10000 USDT on each exchange): spot on Binance and OKX
// (a limit buy rests in Open orders and is cancelled; a market buy fills and
// the bought coin becomes available to sell), futures on OKX (the same, and a
// market buy opens a position whose size is in the coin, not in contracts;
// Binance futures are in trading.e2e.mjs), an order larger than the balance
// (the server's refusal is the spec's toast with its Deposit and Transfer
// links; the form's own check names the balance), and hedge mode on both
// exchanges (the form asks for Open/Close Long/Short; a long and a short at
// once; an order without a position side is refused and the member is told
// why).
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { grouped, orderFigures, press } from "./orders.mjs";
import { getJSON, register, send, signIn, until, withBrowser } from "./session.mjs";

const stamp = Date.now().toString(36);
const member = { email: `e2e-markets-${stamp}@example.com`, password: "Mk6&pZw3" };
// The broker accounts are made in the background after sign-up.
const ACCOUNT_WAIT_MS = 120_000;

const SPOT = { binance: "BTCUSDT", okx: "BTC-USDT" };
const SWAP = { binance: "BTCUSDT", okx: "BTC-USDT-SWAP" };

const open = (name, fn) => withBrowser(`trading-markets-${name}`, { width: 1440 }, async (page) => {
  await signIn(page, member);
  await fn(page);
});

async function openMarket(page, area, exchange, symbol) {
  await page.goto(`/${area}/${exchange}/${symbol}`);
  await page.getByTestId("trade-screen").waitFor();
  await page.getByTestId("order-form").waitFor({ timeout: ACCOUNT_WAIT_MS });
}

const toasts = (page) => page.getByTestId("trade-toasts");

// Waits for a toast saying text; an error toast shown meanwhile fails the wait with what it says.
async function toast(page, text) {
  const wanted = toasts(page).locator(".toast", { hasText: text }).first();
  const error = toasts(page).locator('.toast[data-kind="error"]').first();
  await wanted.or(error).waitFor();
  if (!(await wanted.isVisible())) assert.fail(`error toast: ${await error.innerText()}`);
}

// Places a limit buy from the form, sees it open in Open orders and cancels it there.
async function limitPlacedAndCancelled(page, fig) {
  await press(page.getByTestId("kind-limit"));
  await press(page.getByTestId("side-buy"));
  await page.getByTestId("order-price").fill(fig.price);
  await page.getByTestId("order-size").fill(fig.qty);
  await press(page.getByTestId("order-submit"));
  await toast(page, "Order successfully");

  await press(page.getByRole("tab", { name: "Open orders" }));
  const table = page.getByTestId("open-orders-table");
  const row = table.locator("tbody tr", { has: page.locator('[data-column="price"]', { hasText: grouped(fig.price, "en") }) });
  await row.locator('[data-status="open"]').waitFor();
  assert.equal((await row.locator('[data-column="qty"]').textContent()).trim(), grouped(fig.qty, "en"));
  await press(row.getByTestId("cancel-order"));
  await toast(page, "Order Cancelled");
  await table.getByText("No open orders.").waitFor();
}

// A market buy of size qty (in the coin) from the form.
// Submits the order form once it takes a submit, and waits for the outcome: the size is cleared once the order is
// placed; a refusal fails the test with what the form says.
async function submitOrder(page) {
  const submit = page.getByTestId("order-submit");
  await until(page, async () => submit.isEnabled(), "the order form to take a submit");
  await press(submit);
  const size = page.getByTestId("order-size");
  const refused = page.getByTestId("order-form").getByRole("alert");
  await until(page, async () => (await size.inputValue()) === "" || (await refused.count()) > 0, "the order's outcome");
  if ((await size.inputValue()) !== "") assert.fail(`order refused: ${await refused.first().innerText()}`);
}

async function marketBuy(page, qty) {
  await press(page.getByTestId("kind-market"));
  await press(page.getByTestId("side-buy"));
  await page.getByTestId("order-size").fill(qty);
  await press(page.getByTestId("order-submit"));
}

before(async () => {
  await withBrowser("trading-markets-register", {}, async (page) => {
    await register(page, member);
    await until(
      page,
      async () => {
        const r = await getJSON(page, "/api/v1/accounts");
        const active = (r.body?.accounts ?? []).filter((a) => a.status === "active").map((a) => a.exchange);
        return active.includes("binance") && active.includes("okx");
      },
      "active broker accounts on Binance and OKX",
      ACCOUNT_WAIT_MS,
    );
  });
});

for (const exchange of ["binance", "okx"]) {
  const symbol = SPOT[exchange];
  test(`spot on ${exchange}: a limit buy rests and is cancelled; a market buy fills and the coin can be sold`, async () => {
    await open(`spot-${exchange}`, async (page) => {
      await openMarket(page, "spot", exchange, symbol);
      const fig = await orderFigures(page, { exchange, type: "SPOT", symbol });
      await limitPlacedAndCancelled(page, fig);

      // Nothing to sell before the buy (Binance lists the coin at 0, OKX not at all).
      await press(page.getByTestId("side-sell"));
      await page.getByTestId("available").filter({ hasText: /^(0|—) BTC$/ }).waitFor();

      await marketBuy(page, fig.qtyMarket);
      await toast(page, "Order successfully");
      await press(page.getByRole("tab", { name: "Order history" }));
      const row = page
        .getByTestId("order-history-table")
        .locator("tbody tr", { has: page.locator('[data-status="filled"]') })
        .filter({ has: page.locator('[data-column="type"]', { hasText: "Market" }) });
      await row.first().waitFor();
      assert.equal((await row.first().locator('[data-column="filled"]').textContent()).trim(), grouped(fig.qtyMarket, "en"));
      await press(page.getByRole("tab", { name: "Trade history" }));
      await page.getByTestId("fills-table").locator("tbody tr").first().waitFor();

      // The bought coin (less a fee taken in it, if any) is available to sell.
      await press(page.getByTestId("side-sell"));
      const available = page.getByTestId("available");
      await until(
        page,
        async () => {
          const m = /^([\d,.]+) BTC$/.exec((await available.textContent()).trim());
          return m && Number(m[1].replaceAll(",", "")) > 0 && Number(m[1].replaceAll(",", "")) <= Number(fig.qtyMarket);
        },
        "the bought BTC available to sell",
      );
    });
  });
}

test("futures on OKX: a limit buy rests and is cancelled; a market buy opens a position sized in BTC", async () => {
  const exchange = "okx";
  const symbol = SWAP.okx;
  await open("futures-okx", async (page) => {
    await openMarket(page, "futures", exchange, symbol);
    const fig = await orderFigures(page, { exchange, type: "SWAP", symbol });
    // OKX counts contracts of 0.01 BTC: the screen and the API speak in BTC.
    assert.equal(fig.instrument.contractValue, "0.01");
    await limitPlacedAndCancelled(page, fig);

    await marketBuy(page, fig.qtyMarket);
    await toast(page, "Order successfully");
    await press(page.getByRole("tab", { name: "Positions" }));
    const table = page.getByTestId("positions-table");
    const row = table.locator("tbody tr", { has: page.locator('[data-column="symbol"]', { hasText: symbol }) });
    await row.waitFor();
    assert.equal((await row.locator('[data-column="qty"]').textContent()).trim(), grouped(fig.qtyMarket, "en"));
    assert.equal((await row.locator('[data-column="side"]').textContent()).trim(), "Long");
    await press(row.getByTestId("close-position"));
    await table.getByText("No open positions.").waitFor();
  });
});

for (const exchange of ["binance", "okx"]) {
  test(`an order larger than the balance on ${exchange}: refused with the deposit and transfer links, or stopped by the form`, async () => {
    await open(`insufficient-${exchange}`, async (page) => {
      // Spot: a market buy for more USDT than the account holds goes to the exchange, which refuses it.
      await openMarket(page, "spot", exchange, SPOT[exchange]);
      await press(page.getByTestId("kind-market"));
      await press(page.getByTestId("side-buy"));
      await page.getByTestId("order-size-mode").selectOption("quote");
      const available = page.getByTestId("available");
      await available.filter({ hasText: /^[\d,.]+ USDT$/ }).waitFor();
      const held = (await available.textContent()).trim();
      await page.getByTestId("order-size").fill("1000000");
      await press(page.getByTestId("order-submit"));
      const toast = toasts(page).locator(".toast", { hasText: "Your available balance is insufficient." });
      await toast.waitFor();
      assert.equal(await toast.getAttribute("data-kind"), "error");
      assert.equal(await toast.getByRole("link", { name: "Deposit" }).getAttribute("href"), "/wallet?tab=deposit");
      assert.equal(await toast.getByRole("link", { name: "Transfer" }).getAttribute("href"), "/wallet?tab=transfer");
      await page.getByTestId("order-form").getByRole("alert").filter({ hasText: "Your available balance is insufficient." }).waitFor();
      // Nothing was bought.
      assert.equal((await available.textContent()).trim(), held);

      // Futures: with the largest size known, the form says so before anything is sent.
      await openMarket(page, "futures", exchange, SWAP[exchange]);
      const fig = await orderFigures(page, { exchange, type: "SWAP", symbol: SWAP[exchange] });
      await press(page.getByTestId("kind-limit"));
      await press(page.getByTestId("side-buy"));
      await page.getByTestId("order-price").fill(fig.price);
      await page.getByTestId("max-size").filter({ hasText: /^[\d,.]+ BTC$/ }).waitFor();
      await page.getByTestId("order-size").fill("1000");
      await press(page.getByTestId("order-submit"));
      await page.getByTestId("order-form").getByText("The amount exceeds the balance").first().waitFor();
      await press(page.getByRole("tab", { name: "Open orders" }));
      const orders = page.getByTestId("open-orders-table");
      await orders.getByText("No open orders.").or(orders.locator('tbody [data-column="qty"]').first()).waitFor();
      assert.equal(await orders.locator('tbody [data-column="qty"]', { hasText: /^1,000$/ }).count(), 0, "the order was not sent");
    });
  });
}

for (const exchange of ["binance", "okx"]) {
  const symbol = SWAP[exchange];
  test(`hedge mode on ${exchange}: Open/Close Long/Short, a long and a short at once; an order without a side is explained`, async () => {
    await open(`hedge-${exchange}`, async (page) => {
      await openMarket(page, "futures", exchange, symbol);
      const fig = await orderFigures(page, { exchange, type: "SWAP", symbol });
      const modeButton = page.getByTestId("position-mode");
      await modeButton.filter({ hasText: "One-Way" }).waitFor();
      // One-way mode: one side per order, no position side to choose.
      assert.equal(await page.getByTestId("action-open").count(), 0);
      assert.equal((await page.getByTestId("side-buy").textContent()).trim(), "Buy / Long");

      await press(modeButton);
      const dialog = page.getByTestId("settings-position");
      await dialog.locator('input[type="radio"][value="HEDGE"]').check();
      await press(dialog.getByRole("button", { name: "Confirm" }));
      await toast(page, "Setting successful!");
      await modeButton.filter({ hasText: "Hedge" }).waitFor();
      assert.equal((await getJSON(page, `/api/v1/position-mode?exchange=${exchange}`)).body.mode, "HEDGE");

      // Hedge mode: every order names the position it opens or closes.
      await page.getByTestId("action-open").waitFor();
      assert.equal((await page.getByTestId("side-buy").textContent()).trim(), "Open Long");
      assert.equal((await page.getByTestId("side-sell").textContent()).trim(), "Open Short");
      await press(page.getByTestId("action-close"));
      assert.equal((await page.getByTestId("side-buy").textContent()).trim(), "Close Short");
      assert.equal((await page.getByTestId("side-sell").textContent()).trim(), "Close Long");
      await press(page.getByTestId("action-open"));

      // A long and a short of the same size at once.
      await marketBuy(page, fig.qtyMarket);
      await toast(page, "Order successfully");
      await press(page.getByTestId("side-sell"));
      await page.getByTestId("order-size").fill(fig.qtyMarket);
      await submitOrder(page);
      await press(page.getByRole("tab", { name: "Positions" }));
      const table = page.getByTestId("positions-table");
      for (const side of ["Long", "Short"]) {
        const row = table.locator("tbody tr", { has: page.locator('[data-column="side"]', { hasText: side }) });
        await row.waitFor();
        assert.equal((await row.locator('[data-column="qty"]').textContent()).trim(), grouped(fig.qtyMarket, "en"));
      }
      // Each closed from the form: Close Long sells the long, Close Short buys the short back.
      await press(page.getByTestId("action-close"));
      for (const [button, side] of [
        ["side-sell", "Long"],
        ["side-buy", "Short"],
      ]) {
        await press(page.getByTestId(button));
        await page.getByTestId("order-size").fill(fig.qtyMarket);
        await submitOrder(page);
        await table.locator("tbody tr", { has: page.locator('[data-column="side"]', { hasText: side }) }).waitFor({ state: "detached" });
      }
      await table.getByText("No open positions.").waitFor();
      await press(page.getByTestId("action-open"));

      // Back to one-way from the screen.
      await press(modeButton);
      await dialog.locator('input[type="radio"][value="ONE_WAY"]').check();
      await press(dialog.getByRole("button", { name: "Confirm" }));
      await modeButton.filter({ hasText: "One-Way" }).waitFor();

      // The account is switched to hedge mode elsewhere (another device, as the API allows): an order from the
      // one-way form has no position side, the exchange refuses it and the member is told why.
      const put = await send(page, "PUT", "/api/v1/position-mode", { exchange, mode: "HEDGE" });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      await marketBuy(page, fig.qtyMarket);
      const refusal = toasts(page).locator(".toast", { hasText: "Order failed" });
      await refusal.getByText(/hedge mode: choose Open Long\/Short or Close Long\/Short/).waitFor();
      await page.getByTestId("order-form").getByRole("alert").filter({ hasText: /hedge mode/ }).waitFor();
      assert.equal(await table.locator("tbody tr", { has: page.locator('[data-column="symbol"]') }).count(), 0);
    });
  });
}
