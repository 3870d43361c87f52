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
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { chromium } from "playwright-core";
import { TIMEOUT, baseURL, chromiumArgs, executablePath, outDir } from "./browser.mjs";
import { waitForCode } from "./inbox.mjs";

const stamp = Date.now().toString(36);
const member = { email: `e2e-trading-${stamp}@example.com`, password: "Tr4!dEx9" };
const MARKET = "/futures/binance/BTCUSDT";
// The broker account is made in the background after sign-up.
const ACCOUNT_WAIT_MS = 120_000;

async function withBrowser(name, { locale = "en", theme = "dark", width = 1440, height = 900 } = {}, fn) {
  const profile = await mkdtemp(path.join(tmpdir(), "exhub-e2e-trading-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: chromiumArgs,
    locale: locale === "ja" ? "ja-JP" : "en-US",
    viewport: { width, height },
    baseURL,
  });
  context.setDefaultTimeout(TIMEOUT);
  await context.addInitScript(
    ([l, t]) => {
      if (!localStorage.getItem("exhub.e2e")) {
        localStorage.setItem("exhub.locale", l);
        localStorage.setItem("exhub.theme", t);
        localStorage.setItem("exhub.e2e", "1");
      }
    },
    [locale, theme],
  );
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  try {
    await fn(page, context);
    assert.deepEqual(problems, [], "the page threw");
  } catch (err) {
    await mkdir(outDir, { recursive: true });
    const file = path.join(outDir, `trading-${name}-failure-${Date.now()}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    console.error(`screenshot: ${file}`);
    if (problems.length) console.error(problems.join("\n"));
    throw err;
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}

async function getJSON(page, url) {
  return page.evaluate(async (u) => {
    const r = await fetch(u, { credentials: "same-origin" });
    let body = null;
    try {
      body = await r.json();
    } catch {
      body = null;
    }
    return { status: r.status, body };
  }, url);
}

async function register(page, who) {
  await page.goto("/regist");
  await page.getByRole("heading", { name: "Sign Up" }).waitFor();
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password", { exact: true }).fill(who.password);
  await page.getByLabel("Confirm password").fill(who.password);
  await page.getByLabel("I have read and agree to the Terms of Use").check();
  const since = Date.now();
  await page.getByTestId("register-submit").click();
  await page.getByText("successfully registered!").waitFor();
  await page.waitForURL(/\/otp\?flow=/);
  const { code } = await waitForCode(who.email, since);
  await page.getByLabel("Verification code").fill(code);
  await page.getByRole("button", { name: "Verify" }).click();
  await page.getByText("Your address has been verified.").waitFor();
}

async function login(page, who) {
  await page.goto("/login");
  await page.getByLabel("Email or mobile number").fill(who.email);
  await page.getByLabel("Password", { exact: true }).fill(who.password);
  await page.getByTestId("login-submit").click();
  await page.waitForURL((u) => !u.pathname.startsWith("/login"));
}

// Digits after the point of a step such as "0.001".
function decimalsOf(step) {
  const i = step.indexOf(".");
  return i < 0 ? 0 : step.slice(i + 1).replace(/0+$/, "").length;
}

// A resting buy far under the market and a size worth about twice the minimum notional, from the exchange's own
// instrument and ticker (test arithmetic only: the form and the API do the exact work).
async function orderFigures(page) {
  const inst = await getJSON(page, "/api/v1/instruments?exchange=binance&type=SWAP");
  assert.equal(inst.status, 200);
  const i = inst.body.instruments.find((x) => x.symbol === "BTCUSDT");
  assert.ok(i, "BTCUSDT perpetual on binance");
  const tk = await getJSON(page, "/api/v1/tickers?exchange=binance&type=SWAP");
  const last = Number(tk.body.tickers.find((x) => x.symbol === "BTCUSDT").last);
  assert.ok(last > 0, "a last price");
  const tick = Number(i.tickSize);
  const price = Math.floor((last * 0.8) / tick) * tick;
  const step = Number(i.stepSize);
  const minNotional = Number(i.minNotional || "5");
  const qty = Math.max(Number(i.minQty), Math.ceil((minNotional * 2) / price / step) * step);
  const qtyMarket = Math.max(Number(i.marketMinQty || i.minQty), Math.ceil((minNotional * 2) / last / step) * step);
  return {
    price: price.toFixed(decimalsOf(i.tickSize)),
    amended: (price - 10 * tick).toFixed(decimalsOf(i.tickSize)),
    qty: qty.toFixed(decimalsOf(i.stepSize)),
    qtyMarket: qtyMarket.toFixed(decimalsOf(i.marketStepSize || i.stepSize)),
  };
}

function grouped(s, locale) {
  const [int, frac] = s.split(".");
  const g = Number(int).toLocaleString(locale === "ja" ? "ja-JP" : "en-US");
  return frac && /[1-9]/.test(frac) ? `${g}.${frac.replace(/0+$/, "")}` : g;
}

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
  await page.getByTestId("kind-limit").click();
  await page.getByTestId("side-buy").click();
  await page.getByTestId("order-price").fill(fig.price);
  await page.getByTestId("order-size").fill(fig.qty);
  // Enter submits the form.
  await page.getByTestId("order-size").press("Enter");
  await page.getByTestId("trade-toasts").getByText(text.placed).first().waitFor();

  await page.getByRole("tab", { name: text.openOrders }).click();
  const table = page.getByTestId("open-orders-table");
  const row = table.locator("tbody tr", { has: page.locator('[data-column="price"]', { hasText: grouped(fig.price, text.locale) }) });
  await row.waitFor();
  await row.locator('[data-status="open"]').waitFor();

  await row.getByTestId("amend").click();
  // The row being edited shows inputs in place of its price and size.
  const input = table.getByTestId("amend-price");
  await input.fill(fig.amended);
  await input.press("Enter");
  await page.getByTestId("trade-toasts").getByText(text.modified).first().waitFor();
  const amended = table.locator("tbody tr", { has: page.locator('[data-column="price"]', { hasText: grouped(fig.amended, text.locale) }) });
  await amended.waitFor();

  await amended.getByTestId("cancel-order").click();
  await page.getByTestId("trade-toasts").getByText(text.cancelled).first().waitFor();
  await table.getByText(text.noOrders).waitFor();
}

// A market buy opens a long position of the size sent; closing it at market leaves none.
async function marketRoundTrip(page, fig, text) {
  await page.getByTestId("kind-market").click();
  await page.getByTestId("side-buy").click();
  await page.getByTestId("order-size").fill(fig.qtyMarket);
  await page.getByTestId("order-submit").click();
  await page.getByTestId("trade-toasts").getByText(text.placed).first().waitFor();

  await page.getByRole("tab", { name: text.positions }).click();
  const table = page.getByTestId("positions-table");
  const row = table.locator("tbody tr", { has: page.locator('[data-column="symbol"]', { hasText: "BTCUSDT" }) });
  await row.waitFor();
  assert.equal((await row.locator('[data-column="qty"]').textContent()).trim(), grouped(fig.qtyMarket, text.locale));
  await row.getByTestId("close-position").click();
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
