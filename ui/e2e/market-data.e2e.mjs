// End-to-end check of the Market Data page in Chromium through the edge of a
// running demo stack: real analytics from ClickHouse in English and
// Japanese, both themes, period and exchange switches, the keyboard tooltip,
// the table view, a reload keeping the view and a phone-width layout.
// Screenshots go to e2e/out/.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { TIMEOUT, baseURL, withBrowser } from "./session.mjs";

const PANELS = ["open-interest", "long-short", "taker-volume", "funding-rate"];

const T = {
  en: {
    title: "Market Data",
    table: "Table",
    chart: "Chart",
    okx: "OKX",
    period4h: "4h",
    accounts: "All accounts",
    anomaly: "Network anomaly",
  },
  ja: {
    title: "マーケットデータ",
    table: "テーブル",
    chart: "チャート",
    okx: "OKX",
    period4h: "4時間",
    accounts: "全アカウント",
    anomaly: "ネットワーク異常",
  },
};

const query = (page) => Object.fromEntries(new URL(page.url()).searchParams);

// A fresh stack backfills the demo history after it reports ready (on a new
// clone that takes a minute or two, longer on a busy machine): wait until the
// analytics API holds the series these tests read, so a test never races the
// first backfill. The bound is for a backfill that never comes.
const HISTORY_WAIT_MS = 600_000;
before(
  async () => {
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const from = hour - 3 * 86_400_000;
    const wanted = [];
    for (const [exchange, symbol] of [
      ["binance", "BTCUSDT"],
      ["okx", "BTC-USDT-SWAP"],
      ["okx", "ETH-USDT-SWAP"],
    ]) {
      const q = `exchange=${exchange}&symbol=${symbol}&period=1h&from=${from}`;
      wanted.push(
        `/api/v1/analytics/open-interest?${q}`,
        `/api/v1/analytics/long-short-ratio?${q}&kind=accounts`,
        `/api/v1/analytics/taker-volume?${q}&type=SWAP`,
        `/api/v1/analytics/funding-rate?${q}`,
      );
    }
    const deadline = Date.now() + HISTORY_WAIT_MS;
    let missing = wanted;
    // Each attempt asks for a range ending a millisecond earlier: a new URL, so the edge's cache never answers with
    // the empty series of an earlier attempt.
    for (let attempt = 0; missing.length > 0; attempt++) {
      const still = [];
      for (const url of missing) {
        const res = await fetch(new URL(`${url}&to=${hour - attempt}`, baseURL)).catch(() => null);
        const body = res && res.ok ? await res.json().catch(() => null) : null;
        if (!body || !Array.isArray(body.points) || body.points.length === 0) still.push(url);
      }
      missing = still;
      if (missing.length === 0) break;
      if (Date.now() > deadline) {
        throw new Error(
          `the demo history was not backfilled in ${HISTORY_WAIT_MS / 1000} s; still empty: ${missing.join(", ")}`,
        );
      }
      await new Promise((r) => setTimeout(r, 2_000));
    }
  },
  { timeout: HISTORY_WAIT_MS + 30_000 },
);

// Every panel drawn with real data (not loading, empty or failed).
async function panelsReady(page) {
  await page.waitForFunction(
    (ids) =>
      ids.every((id) => document.querySelector(`[data-testid=panel-${id}]`)?.getAttribute("data-state") === "ready"),
    PANELS,
    { timeout: TIMEOUT },
  );
  const points = {};
  for (const id of PANELS) points[id] = Number(await page.getByTestId(`chart-${id}`).getAttribute("data-points"));
  for (const [id, n] of Object.entries(points)) assert.ok(n > 0, `${id} chart has ${n} points`);
  return points;
}

async function tooltipAtEnd(page, id) {
  const chart = page.getByTestId(`chart-${id}`);
  await chart.focus();
  await chart.press("End");
  const tip = chart.getByTestId("tooltip");
  await tip.waitFor();
  return tip;
}

for (const [locale, theme] of [
  ["en", "dark"],
  ["ja", "light"],
  ["en", "light"],
  ["ja", "dark"],
]) {
  const s = T[locale];
  test(`market data (${locale}, ${theme})`, async () => {
    await withBrowser(`market-data-${locale}-${theme}`, { locale, theme, height: 800, consoleErrors: true }, async (page, _context, shot) => {
      const res = await page.goto("/marketData", { waitUntil: "domcontentloaded" });
      assert.ok(res && res.ok(), `GET /marketData answered ${res?.status()}`);
      await page.getByRole("heading", { name: s.title, level: 1 }).waitFor();
      await page.waitForFunction((t) => document.title === t, `exhub | ${s.title}`);
      assert.equal(await page.evaluate(() => document.documentElement.getAttribute("data-theme")), theme);
      // The default view lands in the URL.
      await page.waitForFunction(() => new URL(location.href).searchParams.get("symbol") === "BTCUSDT");
      assert.deepEqual(query(page), { exchange: "binance", symbol: "BTCUSDT", period: "1h" });
      const hourly = await panelsReady(page);
      // The coming-soon exchange is shown and disabled.
      assert.equal(await page.locator("[data-testid=exchange-picker] [data-exchange=bybit]").isDisabled(), true);

      // Keyboard tooltip: the newest point's time and values in the locale's format.
      const tip = await tooltipAtEnd(page, "open-interest");
      const text = await tip.textContent();
      assert.match(
        text,
        locale === "ja" ? /\d{4}\/\d{1,2}\/\d{1,2} \d{1,2}:\d{2}/ : /[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}/,
      );
      assert.match(text, /\d{1,3}(,\d{3})+(\.\d+)? USDT/);
      assert.match(text, /BTC/);
      const before = await page.getByTestId("chart-open-interest").getAttribute("data-active");
      await page.getByTestId("chart-open-interest").press("ArrowLeft");
      assert.equal(
        Number(await page.getByTestId("chart-open-interest").getAttribute("data-active")),
        Number(before) - 1,
      );
      // Funding tooltip shows a percent.
      assert.match(await (await tooltipAtEnd(page, "funding-rate")).textContent(), /-?\d+\.\d{4,6}%/);
      await shot("1h");

      if (locale === "en" && theme === "dark") {
        // Period switch: new requests, other charts.
        const answered = page.waitForResponse(
          (r) => r.url().includes("/api/v1/analytics/open-interest") && r.url().includes("period=4h"),
        );
        await page.getByTestId("period-picker").getByRole("button", { name: s.period4h, exact: true }).click();
        assert.equal((await answered).status(), 200);
        await page.waitForFunction(() => new URL(location.href).searchParams.get("period") === "4h");
        await page.waitForFunction(
          (n) => Number(document.querySelector("[data-testid=chart-open-interest]")?.getAttribute("data-points")) !== n,
          hourly["open-interest"],
        );
        await panelsReady(page);

        // A reload keeps the view.
        await page.reload({ waitUntil: "domcontentloaded" });
        await panelsReady(page);
        assert.deepEqual(query(page), { exchange: "binance", symbol: "BTCUSDT", period: "4h" });
        assert.equal(
          await page
            .getByTestId("period-picker")
            .getByRole("button", { name: s.period4h, exact: true })
            .getAttribute("aria-pressed"),
          "true",
        );

        // Table view of the same data, sortable.
        const funding = page.getByTestId("panel-funding-rate");
        await funding.getByRole("button", { name: s.table, exact: true }).click();
        const rows = funding.locator("tbody tr");
        await rows.first().waitFor();
        assert.ok((await rows.count()) > 0, "funding table has rows");
        await funding.locator("thead button[data-column=rate]").click();
        assert.notEqual(await funding.locator("thead th").nth(1).getAttribute("aria-sort"), "none");
        await shot("4h-table");
        await funding.getByRole("button", { name: s.chart, exact: true }).click();

        // Exchange switch: OKX opens on its BTC/USDT perpetual; one long/short kind.
        const okxAnswered = page.waitForResponse(
          (r) => r.url().includes("/api/v1/analytics/long-short-ratio") && r.url().includes("exchange=okx"),
        );
        await page.getByTestId("exchange-picker").getByRole("button", { name: s.okx }).click();
        assert.equal((await okxAnswered).status(), 200);
        await page.waitForFunction(() => new URL(location.href).searchParams.get("symbol") === "BTC-USDT-SWAP");
        await panelsReady(page);
        assert.deepEqual(query(page), { exchange: "okx", symbol: "BTC-USDT-SWAP", period: "4h" });
        assert.deepEqual(await page.getByTestId("panel-long-short").locator(".md-legend li").allTextContents(), [
          s.accounts,
        ]);

        // Symbol search: ETH.
        const box = page.getByTestId("symbol-input");
        await box.click();
        await box.fill("eth");
        await page.locator('[role=option][data-symbol="ETH-USDT-SWAP"]').click();
        await page.waitForFunction(() => new URL(location.href).searchParams.get("symbol") === "ETH-USDT-SWAP");
        await panelsReady(page);
        await shot("okx-eth");
      }
      assert.equal(await page.getByText(s.anomaly).count(), 0, "no network anomaly");
    });
  });
}

// The demo stack keeps analytics for 20 perpetuals of each exchange
// (analytics.max_symbols: BTC, ETH, SOL, XRP, DOGE, then the exchange's list
// order); one of the others shows the empty state. The list is searched from
// its end, the symbols the first backfill never reaches, leaving out the five
// tracked first wherever they sit in the list (one still being backfilled has
// no points yet, but will have them by the time the page loads).
const trackedFirst = new Set(["BTC", "ETH", "SOL", "XRP", "DOGE"]);
test("market data: a symbol without history says so", async () => {
  const list = await (await fetch(`${baseURL}/api/v1/instruments?exchange=binance&type=SWAP`)).json();
  let bare = null;
  for (const i of [...list.instruments].reverse().filter((i) => !trackedFirst.has(i.base))) {
    const r = await (
      await fetch(`${baseURL}/api/v1/analytics/open-interest?exchange=binance&symbol=${i.symbol}&period=1d`)
    ).json();
    if (r.points.length === 0) {
      bare = i.symbol;
      break;
    }
  }
  assert.ok(bare, "every binance perpetual has open interest history: none left for the empty state");
  await withBrowser("market-data-empty", { height: 800, consoleErrors: true }, async (page, _context, shot) => {
    await page.goto(`/marketData?exchange=binance&symbol=${bare}&period=1d`, { waitUntil: "domcontentloaded" });
    await page.waitForFunction(
      () => document.querySelector("[data-testid=panel-open-interest]")?.getAttribute("data-state") === "empty",
    );
    assert.equal(await page.getByTestId("panel-open-interest").getByText("No data for this period.").count(), 1);
    await shot("1d");
  });
});

test("market data at phone width", async () => {
  await withBrowser("market-data-phone", { width: 360, height: 800, consoleErrors: true }, async (page, _context, shot) => {
    await page.goto("/marketData?exchange=binance&symbol=BTCUSDT&period=1d", { waitUntil: "domcontentloaded" });
    await panelsReady(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `market data overflows by ${overflow}px at 360px`);
    const widths = await page.evaluate(() =>
      [...document.querySelectorAll(".md-chart svg")].map((s) => s.getBoundingClientRect().width),
    );
    for (const w of widths) assert.ok(w > 250 && w <= 360, `chart width ${w}`);
    // Touch-size tooltip: a tap shows it.
    const chart = page.getByTestId("chart-taker-volume");
    await chart.scrollIntoViewIfNeeded();
    const box = await chart.boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await chart.getByTestId("tooltip").waitFor();
    const overflow2 = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow2 <= 0, `the tooltip overflows by ${overflow2}px at 360px`);
    await shot("1d");
  });
});
