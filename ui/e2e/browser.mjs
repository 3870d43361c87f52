// What every Chromium end-to-end test shares: where the stack and the browser
// are, where screenshots go, the default wait and the browser's flags.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import path from "node:path";
import { fileURLToPath } from "node:url";

export const baseURL = process.env.EXHUB_URL ?? "http://127.0.0.1:8080";
export const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const outDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "out");
export const TIMEOUT = 30_000;

export const chromiumArgs = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
