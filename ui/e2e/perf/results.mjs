// bench/results/ui.json: the UI's figures for `make bench`, one key per check (firstLoadJs from scripts/budget.mjs,
// tradeReady and book50Hz from the perf e2e). Each writer replaces its own key and keeps the others; each entry
// records the machine's 1-minute load average when it was written (timings move with what else runs).
import { mkdir, readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const uiResultsFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../bench/results/ui.json");

export async function recordUiResult(key, value) {
  let all = {};
  try {
    all = JSON.parse(await readFile(uiResultsFile, "utf8"));
  } catch {
    // first run
  }
  all[key] = { ...value, loadAverage1m: Number(os.loadavg()[0].toFixed(2)) };
  await mkdir(path.dirname(uiResultsFile), { recursive: true });
  await writeFile(uiResultsFile, `${JSON.stringify(all, null, 2)}\n`);
}
