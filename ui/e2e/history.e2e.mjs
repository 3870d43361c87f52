// End-to-end check of /history in Chromium through the edge of a running demo
// stack: a new member fills a spot order and opens and closes a futures
// position on Binance (the trading API, as the order form sends them); then
// every history sub-page shows them, in English with the dark theme on a wide
// window and in Japanese with the light theme at a phone's 390 px width; the
// CSV export of each table holds exactly the table's rows; the History menu's
// sub-page is remembered; the tabs work with the keyboard.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { orderFigures } from "./orders.mjs";
import { getJSON, register, until, withBrowser } from "./session.mjs";

const stamp = Date.now().toString(36);
const member = { email: `e2e-history-${stamp}@example.com`, password: "Hs7!tQw2" };
// Broker mode makes the member's paper accounts in the background after sign-up.
const ACCOUNT_WAIT_MS = 120_000;
const EXCHANGE = "binance";
const SYMBOL = "BTCUSDT";

const PAGES = ["spot_trading_overview", "spot_trading_details", "futures_trading_overview", "futures_trading_details", "funding_history"];

const texts = {
  en: {
    heading: "History",
    tabs: ["Spot trading overview", "Spot trading details", "Futures trading overview", "Futures trading details", "Funding history"],
    filled: "Filled",
    realized: "Realized PnL",
    export: "Export CSV",
    orderHeader: ["Time", "Exchange", "Symbol", "Side", "Type", "Price", "Average price", "Size", "Filled", "Status", "Placed through"],
  },
  ja: {
    heading: "履歴",
    tabs: ["現物取引概要", "現物取引明細", "先物取引概要", "先物取引明細", "資金調達履歴"],
    filled: "約定済み",
    realized: "実現損益",
    export: "CSVをエクスポート",
  },
};

// Places an order through the trading API from the page (cookie, CSRF token, an Idempotency-Key) and waits until
// the exchange filled it.
async function place(page, order) {
  const r = await page.evaluate(async (body) => {
    const token = document.cookie
      .split("; ")
      .find((c) => c.startsWith("exhub_csrf="))
      ?.slice("exhub_csrf=".length);
    const res = await fetch("/api/v1/orders", {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "X-CSRF-Token": decodeURIComponent(token ?? ""),
        "Idempotency-Key": crypto.randomUUID(),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }, order);
  assert.ok(r.status === 201 || r.status === 202, `order ${JSON.stringify(order)}: ${r.status} ${JSON.stringify(r.body)}`);
  await until(
    page,
    async () => (await getJSON(page, `/api/v1/orders/${r.body.id}`)).body?.status === "filled",
    `order ${r.body.id} filled`,
  );
  return r.body;
}

// The minimal CSV reader for what the page writes (RFC 4180).
function parseCsv(text) {
  const out = [];
  let row = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\r" || c === "\n") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      out.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || row.length) {
    row.push(field);
    out.push(row);
  }
  return out;
}

// Exports the table as CSV and checks the file: the table's column names, then exactly its rows (each cell's
// exported value, data-csv). The tables here are short: every row is rendered.
async function checkExport(page, tableId, buttonId) {
  const table = page.getByTestId(tableId);
  const headers = await table.locator("thead th").allInnerTexts();
  const rows = await table.locator("tbody tr[data-row]").evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.getAttribute("data-csv") ?? "")),
  );
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId(buttonId).click()]);
  const file = await download.path();
  const text = (await readFile(file, "utf8")).replace(/^\uFEFF/, "");
  const csv = parseCsv(text);
  assert.deepEqual(csv[0], headers.map((h) => h.trim()), `${tableId}: CSV header`);
  assert.deepEqual(csv.slice(1), rows, `${tableId}: CSV rows equal the table's`);
  return rows;
}

// Opens a sub-page from its tab and waits for its table.
async function openTab(page, i, tx) {
  const tab = page.getByTestId(`history-tab-${PAGES[i]}`);
  assert.equal((await tab.innerText()).trim(), tx.tabs[i]);
  await tab.click();
  await page.waitForURL((u) => u.search.includes(`page=${PAGES[i]}`));
  // The URL changes before React renders the new page: wait for the tab to say it is current.
  await page.locator(`[data-testid="history-tab-${PAGES[i]}"][aria-current="page"]`).waitFor();
}

// Checks every sub-page in the page's current language; returns nothing, throws on a difference.
async function checkPages(page, tx, orders, shot, label) {
  await page.goto(`/history?page=${PAGES[0]}`);
  await page.getByRole("heading", { name: tx.heading, level: 1 }).waitFor();

  // Spot overview: the filled spot buy with its journal link (placed through exhub), and equity.
  await page.getByTestId("pnl-equity").waitFor();
  let table = page.getByTestId("history-orders-table");
  await table.locator("tbody tr[data-row]").first().waitFor();
  let row = table.locator(`tbody tr[data-row="${EXCHANGE}|${orders.spot.exchange_order_id}"]`);
  await row.waitFor();
  assert.equal((await row.locator('[data-column="status"]').innerText()).trim(), tx.filled);
  assert.equal(await row.locator('[data-column="symbol"]').innerText(), SYMBOL);
  assert.equal(await row.locator('[data-column="source"]').getAttribute("data-csv"), "exhub");
  assert.equal((await page.getByTestId("export-orders").innerText()).trim(), tx.export);
  if (tx.orderHeader) assert.deepEqual((await table.locator("thead th").allInnerTexts()).map((h) => h.trim()), tx.orderHeader);
  await page.getByTestId("subtotal-trades").waitFor();
  assert.ok(Number(await page.getByTestId("subtotal-trades").innerText()) >= 1, "a spot trade in the sub-totals");
  await checkExport(page, "history-orders-table", "export-orders");
  await shot(`${label}-spot-overview`);

  // Spot details: the buy's fill.
  await openTab(page, 1, tx);
  table = page.getByTestId("history-fills-table");
  await table.locator("tbody tr[data-row]").first().waitFor();
  const spotFills = await checkExport(page, "history-fills-table", "export-fills");
  assert.ok(spotFills.length >= 1, "a spot fill");

  // Futures overview: the opening buy and the closing sell, the realized PnL of the range.
  await openTab(page, 2, tx);
  table = page.getByTestId("history-orders-table");
  for (const o of [orders.open, orders.close]) {
    row = table.locator(`tbody tr[data-row="${EXCHANGE}|${o.exchange_order_id}"]`);
    await row.waitFor();
    assert.equal((await row.locator('[data-column="status"]').innerText()).trim(), tx.filled);
  }
  await page.getByTestId("pnl-total").waitFor();
  await page.getByTestId("history-pnl").getByText(tx.realized).first().waitFor();
  await checkExport(page, "history-orders-table", "export-orders");
  await shot(`${label}-futures-overview`);

  // Futures details: two fills, the closing one with a realized PnL.
  await openTab(page, 3, tx);
  table = page.getByTestId("history-fills-table");
  await table.locator("tbody tr[data-row]").nth(1).waitFor();
  const futFills = await checkExport(page, "history-fills-table", "export-fills");
  const pnlAt = (await table.locator("thead th").allInnerTexts()).findIndex((h) => h.trim() === tx.realized);
  assert.ok(pnlAt >= 0, "a realized PnL column");
  assert.ok(futFills.some((r) => r[pnlAt] !== "" && Number(r[pnlAt]) !== 0), `a fill with realized PnL: ${JSON.stringify(futFills)}`);
  await shot(`${label}-futures-details`);

  // Funding: the table (a fresh position may have no funding settlement yet) and its export.
  await openTab(page, 4, tx);
  await page.getByTestId("history-funding-table").waitFor();
  await checkExport(page, "history-funding-table", "export-funding");

  // Every sub-page fits the window (the tables scroll inside their own box).
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the history page overflows by ${overflow}px`);
}

test("history: spot and futures orders and fills, sub-totals, realized PnL, funding and CSV export (English dark wide, Japanese light 390px)", async () => {
  await withBrowser("history", { width: 1440, height: 900 }, async (page, _context, shot) => {
    await register(page, member);
    await until(
      page,
      async () => {
        const r = await getJSON(page, "/api/v1/accounts");
        return r.body?.accounts?.some((a) => a.exchange === EXCHANGE && a.status === "active");
      },
      "the member's Binance account",
      ACCOUNT_WAIT_MS,
    );
    const spotFig = await orderFigures(page, { exchange: EXCHANGE, type: "SPOT", symbol: SYMBOL });
    const swapFig = await orderFigures(page, { exchange: EXCHANGE, type: "SWAP", symbol: SYMBOL });
    const base = { exchange: EXCHANGE, symbol: SYMBOL, type: "MARKET" };
    const orders = {
      spot: await place(page, { ...base, market_type: "SPOT", side: "BUY", qty: spotFig.qtyMarket }),
      open: await place(page, { ...base, market_type: "SWAP", side: "BUY", qty: swapFig.qtyMarket }),
    };
    orders.close = await place(page, { ...base, market_type: "SWAP", side: "SELL", qty: swapFig.qtyMarket, reduce_only: true });
    // The journal ids: the orders as the history API lists them carry the exchange's order ids.
    for (const k of Object.keys(orders)) {
      orders[k] = (await getJSON(page, `/api/v1/orders/${orders[k].id}`)).body;
      assert.ok(orders[k].exchange_order_id, `${k}: an exchange order id`);
    }

    await checkPages(page, texts.en, orders, shot, "en-dark-wide");

    // The menu's sub-page is remembered: /history alone opens the last one (funding history).
    await page.goto("/history");
    await page.getByTestId("history-funding-table").waitFor();
    assert.equal(await page.getByTestId("history-tab-funding_history").getAttribute("aria-current"), "page");

    // The tabs and the filters work with the keyboard: Enter on a tab opens it; the side filter then Search.
    await page.getByTestId("history-tab-futures_trading_details").focus();
    await page.keyboard.press("Enter");
    await page.getByTestId("history-fills-table").locator("tbody tr[data-row]").first().waitFor();
    await page.getByTestId("filter-side").focus();
    await page.getByTestId("filter-side").selectOption("SELL");
    await page.getByTestId("filter-apply").focus();
    await page.keyboard.press("Enter");
    await until(
      page,
      async () => {
        const sides = await page.getByTestId("history-fills-table").locator('tbody tr[data-row] [data-column="side"]').evaluateAll((tds) => tds.map((td) => td.getAttribute("data-csv")));
        return sides.length > 0 && sides.every((s) => s === "SELL");
      },
      "only sells after the side filter",
    );

    // Japanese, light theme, a phone's width.
    await page.getByTestId("language-menu").filter({ visible: true }).first().selectOption("ja");
    await until(
      page,
      async () => (await getJSON(page, "/api/v1/me/preferences")).body?.preferences?.language === "ja",
      "Japanese saved with the member's preferences",
    );
    if ((await page.evaluate(() => document.documentElement.dataset.theme)) !== "light") {
      await page.getByTestId("theme-toggle").filter({ visible: true }).first().click();
      await page.waitForFunction(() => document.documentElement.dataset.theme === "light");
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await checkPages(page, texts.ja, orders, shot, "ja-light-390");
    await page.locator('html[lang="ja"]').waitFor({ state: "attached" });
  });
});
