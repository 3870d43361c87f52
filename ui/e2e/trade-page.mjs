// Shared by the trade screen's browser checks: Chromium with the launch flags that work here, one fresh profile per
// page, the stored language and theme, and console/page errors collected and failed on.
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { TIMEOUT, baseURL, chromiumArgs, executablePath, outDir } from "./browser.mjs";
export { TIMEOUT, baseURL, outDir };

export const READY_BUDGET_MS = 1500;

export async function withPage(name, { locale = "en", theme = "dark", viewport = { width: 1440, height: 900 } } = {}, fn) {
  const profile = await mkdtemp(path.join(tmpdir(), "exhub-trade-e2e-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: chromiumArgs,
    locale: locale === "ja" ? "ja-JP" : "en-US",
    viewport,
    baseURL,
  });
  context.setDefaultTimeout(TIMEOUT);
  const page = context.pages()[0] ?? (await context.newPage());
  await page.addInitScript(
    ([l, t]) => {
      localStorage.setItem("exhub.locale", l);
      localStorage.setItem("exhub.theme", t);
    },
    [locale, theme],
  );
  const problems = [];
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
  });
  await mkdir(outDir, { recursive: true });
  try {
    await fn(page);
    await page.screenshot({ path: path.join(outDir, `trade-${name}.png`) });
    assert.deepEqual(problems, [], "the page logged errors");
  } catch (err) {
    const file = path.join(outDir, `trade-${name}-failed.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    console.error(`screenshot: ${file}`);
    if (problems.length) console.error(problems.join("\n"));
    throw err;
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}

// Milliseconds from navigation start to the screen's ready mark (chart drawn
// with its first page, book filled).
export async function readyTime(page) {
  await page.locator('[data-ready="true"]').waitFor();
  return page.evaluate(() => performance.getEntriesByName("exhub:trade-ready")[0]?.startTime ?? -1);
}

// A cheap signature of what the chart's canvases show: a sum over a grid of
// sampled pixels of every canvas, so a redraw with another series changes it.
export function chartSignature(page) {
  return page.evaluate(() => {
    let sig = 0;
    for (const c of document.querySelectorAll('[data-testid="chart"] canvas')) {
      if (!c.width || !c.height) continue;
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      const step = 4 * 7;
      for (let i = 0; i < d.length; i += step) sig = (sig * 31 + d[i] + 3 * d[i + 1] + 7 * d[i + 2] + 11 * d[i + 3]) % 2147483647;
    }
    return sig;
  });
}
