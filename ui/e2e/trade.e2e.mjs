// End-to-end test of the trade screen (market side) in Chromium against a
// running stack: both trade routes on Binance and OKX, English and
// Japanese, both themes, screenshots under e2e/out/; the page is ready
// (chart drawn, book filled) within 1.5 s; and it keeps up with 50 book
// updates a second without long tasks over 50 ms.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import { READY_BUDGET_MS, withPage } from "./trade-page.mjs";

async function readyTime(page) {
  await page.locator('[data-ready="true"]').waitFor();
  return page.evaluate(() => performance.getEntriesByName("exhub:trade-ready")[0]?.startTime ?? -1);
}

const markets = [
  { area: "spot", exchange: "binance", symbol: "BTCUSDT" },
  { area: "spot", exchange: "okx", symbol: "BTC-USDT" },
  { area: "futures", exchange: "binance", symbol: "BTCUSDT" },
  { area: "futures", exchange: "okx", symbol: "BTC-USDT-SWAP" },
];

const texts = {
  en: { book: "Order book", trades: "Last trades", rules: "Trading rules", spot: "Spot trading", futures: "Futures trading" },
  ja: { book: "板情報", trades: "最新約定", rules: "取引ルール", spot: null, futures: null },
};

for (const m of markets) {
  for (const [locale, theme] of [
    ["en", "dark"],
    ["ja", "light"],
  ]) {
    test(`${m.area} ${m.exchange} ${m.symbol} (${locale}, ${theme})`, async () => {
      await withPage(`${m.area}-${m.exchange}-${locale}-${theme}`, { locale, theme }, async (page) => {
        await page.goto(`/${m.area}/${m.exchange}/${m.symbol}`);
        const ms = await readyTime(page);
        assert.ok(ms > 0 && ms < READY_BUDGET_MS * 2, `ready after ${ms} ms`);
        assert.equal(await page.getAttribute("html", "data-theme"), theme);
        assert.equal(await page.getAttribute("html", "lang"), locale);
        const tx = texts[locale];
        await page.getByRole("heading", { name: tx.book }).waitFor();
        await page.getByRole("heading", { name: tx.trades }).waitFor();
        await page.getByRole("heading", { name: tx.rules }).waitFor();
        if (tx[m.area]) assert.match(await page.title(), new RegExp(`^exhub \\| ${m.symbol} ${tx[m.area]}$`));
        // Chart: a canvas with pixels drawn.
        const drawn = await page.evaluate(() => {
          const cs = [...document.querySelectorAll('[data-testid="chart"] canvas')];
          return cs.some((c) => c.width > 0 && c.height > 0);
        });
        assert.ok(drawn, "chart canvas");
        // Book: both sides filled, bids descending, asks ascending, not crossed.
        const book = await page.evaluate(() => {
          const prices = (sel) =>
            [...document.querySelectorAll(`${sel} .book-price`)].map((e) => Number(e.textContent.replaceAll(",", "")));
          return { bids: prices('[data-testid="book-bids"]'), asks: prices('[data-testid="book-asks"]').reverse() };
        });
        assert.ok(book.bids.length >= 5 && book.asks.length >= 5, JSON.stringify(book));
        assert.ok(book.bids[0] < book.asks[0], "book not crossed");
        for (let i = 1; i < book.bids.length; i++) assert.ok(book.bids[i] < book.bids[i - 1]);
        for (let i = 1; i < book.asks.length; i++) assert.ok(book.asks[i] > book.asks[i - 1]);
        // Resolutions come from the exchange: Binance has 1s, OKX does not.
        const res = await page.locator('[data-testid="resolutions"] button').allTextContents();
        assert.equal(res.includes("1s"), m.exchange === "binance", res.join(","));
        assert.ok(res.includes("1D") && res.includes("1W"));
        // Header: last price shown; funding countdown on futures.
        assert.match(await page.locator('[data-testid="last-price"]').textContent(), /\d/);
        if (m.area === "futures") {
          // Binance's ticker carries the next funding time; the OKX plugin's
          // does not yet, and the header then shows the placeholder.
          const countdown = m.exchange === "binance" ? /^\d\d:\d\d:\d\d$/ : /^(\d\d:\d\d:\d\d|--:--:--)$/;
          assert.match(await page.locator('[data-testid="funding-countdown"]').textContent(), countdown);
          assert.match(await page.locator('[data-testid="rules"]').textContent(), /\d+×/);
        }
        // The current pair is marked in the pair list.
        assert.equal(await page.locator('.pair-list a[aria-current="page"] .pair-symbol').textContent(), m.symbol);
      });
    });
  }
}

test("default links open BTC against USDT", async () => {
  await withPage("default-links", {}, async (page) => {
    for (const [from, to] of [
      ["/spot/binance", "/spot/binance/BTCUSDT"],
      ["/spot/okx", "/spot/okx/BTC-USDT"],
      ["/futures/binance", "/futures/binance/BTCUSDT"],
      ["/futures/okx", "/futures/okx/BTC-USDT-SWAP"],
    ]) {
      await page.goto(from);
      await page.waitForURL((u) => u.pathname === to);
    }
  });
});

test("pair search, favorites, grouping and resolution switch", async () => {
  await withPage("interactions", {}, async (page) => {
    await page.goto("/futures/binance/BTCUSDT");
    await page.locator('[data-ready="true"]').waitFor();
    await page.getByRole("searchbox", { name: "Search pairs" }).fill("eth");
    const found = await page.locator(".pair-list .pair-symbol").allTextContents();
    assert.ok(found.length > 0 && found.every((s) => s.includes("ETH")), found.join(","));
    await page.getByRole("button", { name: /^Add ETHUSDT to favorites$/ }).click();
    await page.getByRole("searchbox", { name: "Search pairs" }).fill("");
    await page.getByRole("button", { name: "Favorites", exact: true }).click();
    assert.deepEqual(await page.locator(".pair-list .pair-symbol").allTextContents(), ["ETHUSDT"]);
    await page.reload();
    await page.getByRole("button", { name: "Favorites", exact: true }).click();
    assert.deepEqual(await page.locator(".pair-list .pair-symbol").allTextContents(), ["ETHUSDT"]);
    await page.locator(".pair-list a").first().click();
    await page.waitForURL("**/futures/binance/ETHUSDT");
    await page.locator('[data-ready="true"]').waitFor();

    // Coarser grouping: every bid price is a multiple of the bucket.
    const select = page.locator('[data-testid="book-grouping"]');
    const options = await select.locator("option").allTextContents();
    await select.selectOption({ index: 2 });
    const bucket = Number(options[2]);
    await page.waitForFunction(
      (b) => {
        const ps = [...document.querySelectorAll('[data-testid="book-bids"] .book-price')].map((e) =>
          Number(e.textContent.replaceAll(",", "")),
        );
        return ps.length > 1 && ps.every((p) => Math.abs(p / b - Math.round(p / b)) < 1e-6);
      },
      bucket,
    );
    // Another resolution reloads the chart from the API.
    const candles = page.waitForRequest((r) => r.url().includes("/api/v1/candles") && r.url().includes("interval=1h"));
    await page.getByRole("button", { name: "1h", exact: true }).click();
    await candles;
  });
});

test("ready under 1.5 s on localhost", async () => {
  await withPage("ready-budget", {}, async (page) => {
    // Warm the HTTP cache for the app's files, then measure a fresh load.
    await page.goto("/futures/binance/BTCUSDT");
    await page.locator('[data-ready="true"]').waitFor();
    const times = [];
    for (let i = 0; i < 3; i++) {
      await page.reload();
      times.push(await readyTime(page));
    }
    times.sort((a, b) => a - b);
    const median = times[1];
    console.log(`trade screen ready: ${times.map((t) => t.toFixed(0)).join(", ")} ms (median ${median.toFixed(0)})`);
    assert.ok(median > 0 && median < READY_BUDGET_MS, `ready after ${median} ms`);
  });
});

// The stream is replaced with a local one that sends 50 book updates a
// second (each moving several levels) plus trades and tickers; the page
// must apply every update (it shows the last seq) with no long task.
