// First-load JavaScript budgets, from the React Router build manifest:
// the gzip size of every script a fresh visit to a page loads before it
// renders (entry, root route, the page's route and their static imports,
// the manifest itself). Fails when a page is over its budget.
//
//   npm run build && node scripts/budget.mjs [build/client]
//
// With BUDGET_JSON=1 (make bench) the figures are also printed as JSON and
// recorded in bench/results/ui.json under firstLoadJs.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const KiB = 1024;
const budgets = [
  { page: "home (/)", route: "routes/home", limit: 160 * KiB },
  { page: "trade (/futures/…)", route: "routes/trade.futures", limit: 300 * KiB },
  { page: "trade (/spot/…)", route: "routes/trade.spot", limit: 300 * KiB },
  { page: "market data (/marketData)", route: "routes/market-data", limit: 200 * KiB },
];

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = path.resolve(process.argv[2] ?? path.join(here, "..", "build", "client"));

const html = await readFile(path.join(dir, "index.html"), "utf8");
const manifestSrc = /\/assets\/manifest-[\w-]+\.js/.exec(html)?.[0];
if (!manifestSrc) throw new Error(`no React Router manifest referenced in ${dir}/index.html`);
const manifestJs = await readFile(path.join(dir, manifestSrc), "utf8");
const json = manifestJs.slice(manifestJs.indexOf("{"), manifestJs.lastIndexOf("}") + 1);
const manifest = JSON.parse(json);

const gz = new Map();
async function gzipSize(file) {
  if (!gz.has(file)) gz.set(file, gzipSync(await readFile(path.join(dir, file)), { level: 9 }).length);
  return gz.get(file);
}

function routeChain(id) {
  const chain = [];
  for (let r = manifest.routes[id]; r; r = r.parentId ? manifest.routes[r.parentId] : undefined) chain.push(r);
  return chain;
}

let failed = false;
const report = [];
for (const b of budgets) {
  if (!manifest.routes[b.route]) {
    console.error(`budget: route ${b.route} is not in the build`);
    failed = true;
    continue;
  }
  const files = new Set([manifestSrc, manifest.entry.module, ...manifest.entry.imports]);
  for (const r of routeChain(b.route)) {
    files.add(r.module);
    for (const f of r.imports ?? []) files.add(f);
  }
  let total = 0;
  for (const f of files) total += await gzipSize(f);
  const ok = total <= b.limit;
  if (!ok) failed = true;
  report.push({ page: b.page, gzipKiB: +(total / KiB).toFixed(1), budgetKiB: b.limit / KiB, files: files.size, ok });
  console.log(
    `${ok ? "ok  " : "OVER"} ${b.page.padEnd(27)} first-load JS ${(total / KiB).toFixed(1)} KiB gzip (budget ${b.limit / KiB} KiB, ${files.size} files)`,
  );
}
if (process.env.BUDGET_JSON) {
  console.log(JSON.stringify(report));
  const { recordUiResult } = await import("../e2e/perf/results.mjs");
  await recordUiResult("firstLoadJs", { measured: new Date().toISOString(), pages: report });
}
process.exit(failed ? 1 : 0);
