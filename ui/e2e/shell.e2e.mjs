// End-to-end check of the shell, home, Markets, About and Market Data pages in
// Chromium through the edge of a running demo stack, in English and
// Japanese and in both themes. Screenshots of every page go to e2e/out/.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TIMEOUT, withBrowser } from "./session.mjs";

async function waitForTitle(page, title) {
  await page.waitForFunction((t) => document.title === t, title, { timeout: TIMEOUT });
}

const T = {
  en: {
    home: "Home",
    markets: "Markets",
    marketData: "Market Data",
    about: "About exhub",
    aboutTitle: "About us",
    login: "Log In",
    signUp: "Sign Up",
    search: "Search markets",
    spot: "Spot",
    futures: "Futures",
    lastPrice: "Last price",
    email: "E-mail or phone number",
    movers: "Top movers (24h)",
  },
  ja: {
    home: "ホーム",
    markets: "マーケット",
    marketData: "マーケットデータ",
    about: "exhub について",
    aboutTitle: "会社概要",
    login: "ログイン",
    signUp: "新規登録",
    search: "マーケットを検索",
    spot: "現物",
    futures: "先物",
    lastPrice: "最終価格",
    email: "メールアドレスまたは電話番号",
    movers: "24時間の値動きランキング",
  },
};

for (const [locale, theme] of [
  ["en", "dark"],
  ["ja", "light"],
  ["en", "light"],
  ["ja", "dark"],
]) {
  const s = T[locale];
  test(`home, markets, about and market data (${locale}, ${theme})`, async () => {
    await withBrowser(`shell-${locale}-${theme}`, { locale, theme, height: 800, consoleErrors: true, fullPageShots: false }, async (page, _context, shot) => {
      const res = await page.goto("/", { waitUntil: "domcontentloaded" });
      assert.ok(res && res.ok(), `GET / answered ${res?.status()}`);
      assert.equal(await page.evaluate(() => document.documentElement.getAttribute("data-theme")), theme);
      assert.equal(await page.evaluate(() => document.documentElement.lang), locale);
      await waitForTitle(page, `exhub | ${s.home}`);

      // Movers from the live API: five tiles that open futures markets.
      await page.getByRole("heading", { name: s.movers }).waitFor();
      const tiles = page.getByTestId("movers").getByRole("link");
      await tiles.first().waitFor();
      assert.equal(await tiles.count(), 5);
      assert.match((await tiles.first().getAttribute("href")) ?? "", /^\/futures\/[a-z0-9-]+\/[A-Z0-9-]+$/);
      // The carousel shows one of three slides, the FAQ its first item open.
      await page.getByTestId("carousel").waitFor();
      assert.equal(await page.getByTestId("carousel-slide").count(), 3);
      const open = await page.evaluate(() => [...document.querySelectorAll("[data-testid=faq] details")].map((d) => d.open));
      assert.deepEqual(open, [true, false, false, false]);
      await shot("home");

      // Navigation: Markets > Market.
      await page.getByTestId("nav-markets").getByRole("button", { name: s.markets }).click();
      await page.getByRole("link", { name: s.markets === "Markets" ? "Market" : "マーケット", exact: true }).click();
      await waitForTitle(page, `exhub | ${s.markets}`);
      await page.getByTestId("markets-table").waitFor();
      const rows = page.locator(".markets-body-row");
      await rows.first().waitFor();
      const rendered = await rows.count();
      const total = Number((await page.locator(".markets-count").textContent()).match(/\d+/)[0]);
      assert.ok(total > 20, `markets listed: ${total}`);
      assert.ok(rendered < total, `virtualized: ${rendered} of ${total} rows in the page`);
      // Search narrows to BTC markets of every exchange.
      await page.getByRole("searchbox", { name: s.search }).fill("btc usdt");
      await page.waitForFunction(() => document.querySelectorAll(".markets-body-row").length >= 2);
      const symbols = await rows.evaluateAll((els) => els.map((e) => e.dataset.symbol));
      assert.ok(symbols.includes("BTCUSDT") && symbols.includes("BTC-USDT-SWAP"), `search found ${symbols}`);
      // Live prices: a price cell changes (normally at once; the bound is only for a broken stream).
      const btc = page.locator('.markets-body-row[data-symbol="BTCUSDT"] [data-testid=last]');
      const before = await btc.textContent();
      await page.waitForFunction(
        (b) => document.querySelector('.markets-body-row[data-symbol="BTCUSDT"] [data-testid=last]')?.textContent !== b,
        before,
        { timeout: 120_000 },
      );
      const dir = await btc.getAttribute("data-direction");
      assert.ok(dir === "up" || dir === "down", `tick direction ${dir}`);
      await shot("markets");
      // Sort by last price and open the spot tab.
      await page.getByRole("searchbox", { name: s.search }).fill("");
      await page.getByRole("button", { name: s.lastPrice }).click();
      await page.getByRole("tab", { name: s.spot }).click();
      await page.waitForFunction(() => new URL(location.href).searchParams.get("tab") === "spot");
      await rows.first().waitFor();
      assert.match((await rows.first().getByRole("link").getAttribute("href")) ?? "", /^\/spot\//);

      // About: this deployment's exchanges; Market Data; a protected page without a session.
      await page.goto("/about", { waitUntil: "domcontentloaded" });
      await page.getByRole("heading", { level: 1, name: s.about }).waitFor();
      await page.getByTestId("about-page").getByTestId("exchange-list").waitFor();
      await waitForTitle(page, `exhub | ${s.aboutTitle}`);
      await shot("about");
      await page.goto("/marketData", { waitUntil: "domcontentloaded" });
      await page.getByRole("heading", { name: s.marketData }).waitFor();
      await waitForTitle(page, `exhub | ${s.marketData}`);
      await shot("market-data");
      await page.goto("/wallet", { waitUntil: "domcontentloaded" });
      await page.getByRole("heading", { name: s.login }).waitFor();
      assert.equal(new URL(page.url()).pathname, "/login");

      // Quick register: Enter stores the account and opens /regist.
      await page.goto("/", { waitUntil: "domcontentloaded" });
      const box = page.getByRole("textbox", { name: s.email });
      await box.fill("trader@example.com");
      await box.press("Enter");
      await page.getByRole("heading", { name: s.signUp }).waitFor();
      assert.equal(await page.evaluate(() => localStorage.getItem("exhub.register.account")), "trader@example.com");

      // The X link differs for Japanese.
      const x = await page.getByTestId("community").getByRole("link", { name: "X" }).getAttribute("href");
      assert.match(x ?? "", locale === "ja" ? /_jp$/ : /\/exhub$/);
    });
  });
}

test("phone width: drawer and no sideways overflow", async () => {
  await withBrowser("shell-phone", { width: 360, height: 800, consoleErrors: true, fullPageShots: false }, async (page, _context, shot) => {
    await page.goto("/", { waitUntil: "domcontentloaded" });
    await page.getByTestId("movers").waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `home overflows by ${overflow}px at 360px`);
    await page.getByTestId("drawer-toggle").click();
    const drawer = page.getByTestId("drawer");
    await drawer.waitFor();
    await drawer.getByText("Markets", { exact: true }).click();
    await shot("drawer");
    await drawer.getByRole("link", { name: "Market", exact: true }).click();
    await page.getByTestId("markets-table").waitFor();
    assert.equal(await page.getByTestId("drawer").count(), 0);
    const overflow2 = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow2 <= 0, `markets page overflows by ${overflow2}px at 360px`);
    await shot("markets-phone");
  });
});
