// bench/results/ui.json: the UI's figures for `make bench`, one key per check (firstLoadJs from scripts/budget.mjs,
// tradeReady and book50Hz from the perf e2e). Each writer replaces its own key and keeps the others.
import { mkdir, readFile, writeFile } from "node:fs/promises";
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
  all[key] = value;
  await mkdir(path.dirname(uiResultsFile), { recursive: true });
  await writeFile(uiResultsFile, `${JSON.stringify(all, null, 2)}\n`);
}
