// End-to-end check of the running stack in Chromium: the exchange list in
// English, then Japanese, the theme toggle, titles, persistence across a
// reload, keyboard access and a phone-width layout.
//
// The stack must already be running. EXHUB_URL (default
// http://127.0.0.1:8080) is the edge URL; CHROMIUM_PATH overrides
// /usr/bin/chromium. On failure a screenshot is saved under e2e/out/.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TIMEOUT, baseURL, withBrowser } from "./session.mjs";

function card(page, name) {
  return page.locator("li.exchange-card", { has: page.getByRole("heading", { name, exact: true }) });
}

async function htmlAttr(page, name) {
  return page.evaluate((n) => document.documentElement.getAttribute(n), name);
}

async function waitForTitle(page, title) {
  await page.waitForFunction((t) => document.title === t, title, { timeout: TIMEOUT });
}

test("exchange list in English and Japanese, theme and layout", async () => {
  await withBrowser("stack", { store: false, height: 800, consoleErrors: true }, async (page) => {
    const res = await page.goto("/", { waitUntil: "domcontentloaded" });
    assert.ok(res && res.ok(), `GET ${baseURL}/ answered ${res?.status()}`);
    // The boot script has applied the defaults before the app starts.
    assert.equal(await htmlAttr(page, "data-theme"), "dark");
    assert.equal(await htmlAttr(page, "lang"), "en");

    // English list from the live API.
    const binance = card(page, "Binance");
    await binance.waitFor();
    const okx = card(page, "OKX");
    await okx.waitFor();
    assert.equal(await okx.getByTestId("status-badge").textContent(), "Available");
    const bybit = card(page, "Bybit");
    await bybit.waitFor();
    assert.equal(await bybit.getByTestId("status-badge").textContent(), "Coming soon");
    assert.equal(await binance.getByTestId("status-badge").textContent(), "Available");
    assert.equal(await bybit.getByRole("link", { name: "Futures" }).count(), 0, "coming-soon futures must not be a link");
    const logo = binance.locator("img.exchange-logo");
    assert.match((await logo.getAttribute("src")) ?? "", /^data:image\/svg\+xml/);
    await waitForTitle(page, "exhub | Home");

    // Keyboard: the first Tab reaches the skip link.
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");

    // An available exchange opens its trading page (the exchange's default market).
    await binance.getByRole("link", { name: "Spot" }).click();
    await page.waitForFunction(() => /^exhub \| (\S+ )?Spot trading$/.test(document.title), null, { timeout: TIMEOUT });
    assert.match(new URL(page.url()).pathname, /^\/spot\/binance/);
    await page.getByRole("link", { name: "exhub home" }).click();
    await binance.waitFor();

    // Japanese through the language menu.
    await page.getByRole("combobox", { name: "Language" }).selectOption("ja");
    await page.getByRole("heading", { name: "取引所", exact: true }).waitFor();
    await bybit.getByText("近日公開").waitFor();
    assert.equal(await binance.getByTestId("status-badge").textContent(), "取引可能");
    await waitForTitle(page, "exhub | ホーム");
    assert.equal(await htmlAttr(page, "lang"), "ja");
    const font = await page.evaluate(() => getComputedStyle(document.body).fontFamily);
    assert.match(font, /IPAGothic|Noto Sans CJK JP|Hiragino/, "Japanese uses the CJK font stack");

    // Theme toggle.
    const darkBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.getByRole("button", { name: "ライトテーマに切り替え" }).click();
    // The switch re-renders after the click: wait for it, then for the colours it brings.
    await page.waitForFunction(() => document.documentElement.getAttribute("data-theme") === "light");
    await page.waitForFunction((bg) => getComputedStyle(document.body).backgroundColor !== bg, darkBg);

    // Both choices survive a reload and apply before the app renders.
    await page.reload({ waitUntil: "domcontentloaded" });
    assert.equal(await htmlAttr(page, "data-theme"), "light");
    assert.equal(await htmlAttr(page, "lang"), "ja");
    await bybit.getByText("近日公開").waitFor();
    await page.getByRole("button", { name: "ダークテーマに切り替え" }).waitFor();

    // Phone width: nothing overflows sideways.
    await page.setViewportSize({ width: 360, height: 740 });
    await bybit.waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page overflows horizontally by ${overflow}px at 360px`);
  });
});

test("unknown paths fall back to the app", async () => {
  await withBrowser("fallback", { store: false, height: 800, consoleErrors: true }, async (page) => {
    const res = await page.goto("/futures/binance/BTCUSDT", { waitUntil: "domcontentloaded" });
    assert.ok(res && res.ok(), `deep link answered ${res?.status()}`);
    await waitForTitle(page, "exhub | BTCUSDT Futures trading");
    await page.goto("/no/such/page", { waitUntil: "domcontentloaded" });
    await page.getByRole("heading", { name: "Page not found" }).waitFor();
  });
});
