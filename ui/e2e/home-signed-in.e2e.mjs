// End-to-end check of the signed-in home in Chromium through the edge of a running demo stack: a new member's home
// shows the balance card beside the movers (no quick registration) with the estimated balance in USDT (> 0 once the
// demo broker accounts are funded) as GET /api/v1/home/summary gives it, today's change with its realized and
// unrealized parts, an eye that masks the figures and is remembered in the member's preferences (across a reload
// and in another browser), Deposit and Wallet buttons, and the top bar's Deposit button on the deposit sub-page;
// then the same card in Japanese, light theme, at 390 px wide, by keyboard.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import { getJSON, register, signIn, until, withBrowser as browser } from "./session.mjs";

const withBrowser = (name, opts, fn) => browser(`home-signed-in-${name}`, opts, fn);

const member = { email: `e2e-home-in-${Date.now().toString(36)}@example.com`, password: "Hb5#qLx8" };
// Broker mode makes and funds the sub-accounts in the background after sign-up.
const ACCOUNT_WAIT_MS = 120_000;

// A formatted figure ("10,000.00 USDT", "+1.50 USDT") as a number for comparisons.
const amount = (text) => Number(text.replace(/[^0-9.+-]/g, ""));

test("a signed-in member's home: the balance card beside the movers, the eye, the wallet buttons", async () => {
  await withBrowser("desktop", { theme: "dark", width: 1280, height: 900 }, async (page, _ctx, shot) => {
    await register(page, member);
    await page.goto("/");
    const card = page.getByTestId("home-balance");
    await card.waitFor();
    assert.equal(await page.getByTestId("quick-register").count(), 0, "no quick registration for a member");
    // Beside the movers: the card and the movers' heading side by side on a wide screen.
    const [cardBox, moversBox] = [await card.boundingBox(), await page.locator("#movers-heading").boundingBox()];
    assert.ok(moversBox.x > cardBox.x + cardBox.width - 1, `movers beside the card: ${JSON.stringify([cardBox, moversBox])}`);

    // The demo broker accounts are funded in the background: wait until the balance is positive.
    const total = page.getByTestId("home-balance-total");
    await until(
      page,
      async () => (await total.count()) > 0 && amount(await total.textContent()) > 0,
      "a positive estimated balance",
      ACCOUNT_WAIT_MS,
    );
    assert.match(await total.textContent(), /^[0-9,]+\.[0-9]{2} USDT$/);
    const api = await getJSON(page, "/api/v1/home/summary");
    assert.equal(api.status, 200);
    assert.ok(Number(api.body.total_usdt) > 0, JSON.stringify(api.body));
    assert.ok(api.body.exchanges.some((e) => e.status === "ok"), JSON.stringify(api.body.exchanges));
    assert.match(await page.getByTestId("home-balance-change").textContent(), /USDT/);
    assert.match(await page.getByTestId("home-balance-realized").textContent(), /USDT/);
    assert.match(await page.getByTestId("home-balance-unrealized").textContent(), /USDT/);
    await shot("card");

    // The eye masks every figure and is remembered: after a reload and in the member's preferences.
    await card.getByRole("button", { name: "Hide balances" }).click();
    assert.equal(await total.textContent(), "****** USDT");
    assert.equal(await page.getByTestId("home-balance-change").textContent(), "****** USDT");
    await until(
      page,
      async () => (await getJSON(page, "/api/v1/me/preferences")).body?.preferences?.hide_balances === true,
      "hide_balances saved with the member's preferences",
    );
    await page.reload();
    await page.getByTestId("home-balance-total").waitFor();
    assert.equal(await page.getByTestId("home-balance-total").textContent(), "****** USDT");
    assert.equal(await card.getByRole("button", { name: "Show balances" }).getAttribute("aria-pressed"), "true");
    await shot("masked");

    // The card's Deposit button opens the deposit sub-page; so does the top bar's.
    await card.getByRole("link", { name: "Deposit" }).click();
    await page.waitForURL((u) => u.pathname === "/wallet" && u.searchParams.get("page") === "deposit");
    await page.getByTestId("wallet-deposit").waitFor();
    await page.goto("/");
    await card.waitFor();
    await page.locator(".account-nav").getByRole("link", { name: "Deposit", exact: true }).click();
    await page.waitForURL((u) => u.pathname === "/wallet" && u.searchParams.get("page") === "deposit");
    await page.getByTestId("wallet-deposit").waitFor();
    await page.goto("/");
    await card.getByRole("link", { name: "Wallet" }).click();
    await page.waitForURL((u) => u.pathname === "/wallet" && u.searchParams.get("page") === "overview");
  });

  // Another browser: the eye's choice comes back from the preferences; Japanese, light, a phone, the keyboard.
  await withBrowser("phone-ja", { theme: "light", width: 390, height: 844 }, async (page, _ctx, shot) => {
    await signIn(page, member);
    await page.goto("/");
    await page.getByTestId("home-balance").waitFor();
    await page.getByTestId("language-menu").filter({ visible: true }).first().selectOption("ja");
    await page.locator('html[lang="ja"]').waitFor({ state: "attached" });
    const card = page.getByTestId("home-balance");
    await card.getByRole("heading", { name: "推定残高" }).waitFor();
    if ((await page.evaluate(() => document.documentElement.dataset.theme)) !== "light") {
      await page.getByTestId("theme-toggle").filter({ visible: true }).first().click();
      await page.waitForFunction(() => document.documentElement.dataset.theme === "light");
    }
    const total = page.getByTestId("home-balance-total");
    await until(page, async () => (await total.count()) > 0 && (await total.textContent()) === "****** USDT", "the masked balance");
    // By keyboard: the eye takes focus and Enter shows the figures again.
    const eye = card.getByRole("button", { name: "残高を表示" });
    await eye.focus();
    await page.keyboard.press("Enter");
    await until(page, async () => amount(await total.textContent()) > 0, "the balance shown again");
    assert.equal(await card.getByRole("button", { name: "残高を隠す" }).getAttribute("aria-pressed"), "false");
    await card.getByText("実現損益", { exact: true }).waitFor();
    await card.getByText("未実現損益", { exact: true }).waitFor();
    await card.getByRole("link", { name: "入金" }).waitFor();
    // Nothing is wider than the phone.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
    const box = await card.boundingBox();
    assert.ok(box.width <= 390, `card ${box.width}px wide`);
    await shot("ja-light-390");
    await until(
      page,
      async () => (await getJSON(page, "/api/v1/me/preferences")).body?.preferences?.hide_balances !== true,
      "the shown balances saved",
    );
  });
});
