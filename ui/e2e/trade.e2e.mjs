// End-to-end test of the trade screen (market side) in Chromium against a
// running stack: both trade routes on Binance and OKX, English and
// Japanese, both themes, screenshots under e2e/out/. Every check waits for
// what it reads to appear (order and eventual arrival, never a stopwatch):
// how fast the screen gets ready is measured by `make bench`
// (ui/e2e/perf/), on an idle machine.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import path from "node:path";
import { chartSignature, outDir, readyTime, withPage } from "./trade-page.mjs";

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
        // Ready (chart drawn with its first page, book filled), and the ready mark recorded for the perf check.
        assert.ok((await readyTime(page)) > 0, "the ready mark is recorded");
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
        // Header: last price shown (from the first ticker, which may follow the ready mark); funding countdown on
        // futures.
        await page.waitForFunction(() => /\d/.test(document.querySelector('[data-testid="last-price"]')?.textContent ?? ""));
        if (m.area === "futures") {
          // Funding rate and countdown on both exchanges (OKX's from its
          // funding-rate endpoint: the first ticker poll may predate it).
          await page.waitForFunction(
            () => {
              const f = document.querySelector('[data-testid="funding"]')?.textContent ?? "";
              return /-?\d+\.\d{4}%/.test(f) && /\d\d:\d\d:\d\d/.test(f) && !f.includes("00:00:00");
            },
            null,
            { timeout: 120_000 }, // the first funding poll of a freshly started stack; normally already there
          );
          assert.match(await page.locator('[data-testid="funding-countdown"]').textContent(), /^\d\d:\d\d:\d\d$/);
          assert.match(await page.locator('[data-testid="rules"]').textContent(), /\d+×/);
        }
        // Full width: the grid spans the window, not the shell's reading column.
        const width = await page.evaluate(() => document.querySelector('[data-testid="trade-screen"]').getBoundingClientRect().width);
        assert.ok(width >= 1400, `trade screen ${width} px wide in a 1440 px window`);
        const chartWidth = await page.evaluate(() => document.querySelector('[data-testid="chart"]').getBoundingClientRect().width);
        assert.ok(chartWidth >= 800, `chart ${chartWidth} px wide in a 1440 px window`);
        // The current pair is marked in the pair list.
        assert.equal(await page.locator('.pair-list a[aria-current="page"] .pair-symbol').textContent(), m.symbol);
      });
    });
  }
}

// Waits until the pair list shows a non-empty list whose every symbol contains `every`, or exactly the symbols
// `exactly`; the list re-renders after each input, so reading it at once could see the one before.
async function waitForPairs(page, { every, exactly }) {
  await page.waitForFunction(
    ([sub, want]) => {
      const s = [...document.querySelectorAll(".pair-list .pair-symbol")].map((e) => e.textContent);
      if (want) return s.length === want.length && s.every((x, i) => x === want[i]);
      return s.length > 0 && s.every((x) => x.includes(sub));
    },
    [every ?? null, exactly ?? null],
  );
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
    await waitForPairs(page, { every: "ETH" });
    await page.getByRole("button", { name: /^Add ETHUSDT to favorites$/ }).click();
    await page.getByRole("searchbox", { name: "Search pairs" }).fill("");
    await page.getByRole("button", { name: "Favorites", exact: true }).click();
    await waitForPairs(page, { exactly: ["ETHUSDT"] });
    await page.reload();
    // After a reload the pair list fills from the instruments API: wait for the screen before filtering it.
    await page.locator('[data-ready="true"]').waitFor();
    await page.locator(".pair-list .pair-symbol").first().waitFor();
    await page.getByRole("button", { name: "Favorites", exact: true }).click();
    await waitForPairs(page, { exactly: ["ETHUSDT"] });
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

test("every chart type redraws the chart, in both themes", async () => {
  for (const theme of ["dark", "light"]) {
    await withPage(`chart-types-${theme}`, { theme }, async (page) => {
      await page.goto("/futures/okx/BTC-USDT-SWAP");
      await page.locator('[data-ready="true"]').waitFor();
      const select = page.locator('[data-testid="chart-type"]');
      const options = await select.locator("option").evaluateAll((os) => os.map((o) => ({ value: o.value, type: o.dataset.type, label: o.textContent })));
      assert.deepEqual(
        options.map((o) => `${o.type} ${o.value}`),
        ["Bars 0", "Candles 1", "HollowCandles 9", "Columns 13", "Line 2", "LineWithMarkers 14", "StepLine 15", "Area 3", "HLCArea 16", "Baseline 10", "HighLow 12", "HeikinAshi 8"],
      );
      const seen = new Map();
      let prev = await chartSignature(page);
      // Candles first is the default; start from Bars so each step changes the picture.
      for (const o of options) {
        await select.selectOption(o.value);
        await page.locator(`[data-testid="chart"][data-chart-type="${o.type}"]`).waitFor();
        await page.waitForFunction(
          async (before) => {
            await new Promise((r) => requestAnimationFrame(() => r(null)));
            let sig = 0;
            for (const c of document.querySelectorAll('[data-testid="chart"] canvas')) {
              if (!c.width || !c.height) continue;
              const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
              for (let i = 0; i < d.length; i += 28) sig = (sig * 31 + d[i] + 3 * d[i + 1] + 7 * d[i + 2] + 11 * d[i + 3]) % 2147483647;
            }
            return sig !== before;
          },
          prev,
        );
        prev = await chartSignature(page);
        seen.set(o.type, prev);
        if (theme === "dark") await page.locator('[data-testid="chart"]').screenshot({ path: path.join(outDir, `trade-chart-${o.type}.png`) });
      }
      // Twelve different pictures (the live candle may move between two, never all back to one).
      assert.ok(new Set(seen.values()).size >= 11, JSON.stringify([...seen]));
      // The choice is kept by its spec key.
      assert.equal(await page.evaluate(() => JSON.parse(localStorage.getItem("exhub.trade.chart")).chartType), 8);
      await page.reload();
      await page.locator('[data-testid="chart"][data-chart-type="HeikinAshi"]').waitFor();
      // Indicators still come and go over a custom type: MACD adds a pane, and taking it off removes it.
      const canvases = () => page.evaluate(() => document.querySelectorAll('[data-testid="chart"] canvas').length);
      await page.locator('[data-ready="true"]').waitFor();
      const before = await canvases();
      await page.getByRole("button", { name: "MACD", exact: true }).click();
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="chart"] canvas').length > n, before);
      await page.getByRole("button", { name: "MACD", exact: true }).click();
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="chart"] canvas').length === n, before);
      assert.equal(await page.locator('[data-testid="chart"]').getAttribute("data-chart-type"), "HeikinAshi");
    });
  }
});

test("phone width: stacked, one panel at a time, keyboard reachable", async () => {
  await withPage("phone", { viewport: { width: 360, height: 740 } }, async (page) => {
    await page.goto("/futures/okx/BTC-USDT-SWAP");
    await page.locator('[data-ready="true"]').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${overflow} px of sideways overflow`);
    const tabs = page.getByTestId("mobile-tabs");
    assert.ok(await tabs.isVisible(), "panel tabs shown");
    const visible = (sel) => page.locator(sel).first().isVisible();
    assert.ok(await visible('[data-testid="chart"]'), "chart shown");
    assert.ok(await visible('[data-testid="book-bids"]'), "book shown first");
    assert.equal(await visible('[data-testid="trades"]'), false, "trades hidden behind their tab");
    assert.equal(await visible('[data-testid="pair-list"]'), false, "pairs hidden behind their tab");
    // Chart above the panels, each across the width.
    const box = await page.evaluate(() => {
      const r = (s) => document.querySelector(s).getBoundingClientRect();
      return { chart: r('[data-testid="chart"]'), tabs: r('[data-testid="mobile-tabs"]'), book: r('[data-testid="book-bids"]') };
    });
    assert.ok(box.chart.bottom <= box.tabs.top && box.tabs.bottom <= box.book.top, JSON.stringify(box));
    assert.ok(box.chart.width >= 330, `chart ${box.chart.width} px wide`);

    await tabs.getByRole("button", { name: "Last trades" }).click();
    await page.locator('[data-testid="trades"]').waitFor({ state: "visible" });
    assert.equal(await visible('[data-testid="book-bids"]'), false);
    // Keyboard: focus a tab and press Enter.
    await tabs.getByRole("button", { name: "Pairs" }).focus();
    await page.keyboard.press("Enter");
    await page.locator('[data-testid="pair-list"]').waitFor({ state: "visible" });
    // The pair list follows the tabs in the keyboard order.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("aria-label")), "Search pairs");
    await page.keyboard.type("eth");
    await page.waitForFunction(() => {
      const s = [...document.querySelectorAll(".pair-list .pair-symbol")].map((e) => e.textContent);
      return s.length > 0 && s.every((x) => x.includes("ETH"));
    });
    const listWidth = await page.evaluate(() => document.querySelector('[data-testid="pair-list"]').getBoundingClientRect().width);
    assert.ok(listWidth >= 300, `pair list ${listWidth} px wide on a 360 px screen`);
    await page.screenshot({ path: path.join(outDir, "trade-phone-pairs.png"), fullPage: true });
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0);
  });
});
