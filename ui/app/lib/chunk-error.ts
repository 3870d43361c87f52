// Recognises a failed dynamic import (a route chunk or a lazily loaded
// piece that the browser could not fetch, usually after a deploy replaced
// the files or when the network dropped), so the error screen can offer a
// reload instead of a blank page. Browsers word it differently:
//   Chromium  "Failed to fetch dynamically imported module: <url>"
//   Firefox   "error loading dynamically imported module: <url>"
//   WebKit    "Importing a module script failed."
//   Vite      "Unable to preload CSS for <url>" (a chunk's style sheet)
// and bundlers with named chunks throw a ChunkLoadError
// ("Loading chunk 12 failed." / "Loading CSS chunk 12 failed.").

export type ChunkFailure = {
  // The chunk's file name without its content hash, or "?" when unknown.
  id: string;
  css: boolean;
  // What failed: "error" (the request) or "timeout".
  type: string;
  // The address that could not be loaded, when the browser named it.
  address: string;
};

const PATTERNS: { re: RegExp; css: boolean }[] = [
  { re: /failed to fetch dynamically imported module:?\s*(\S*)/i, css: false },
  { re: /error loading dynamically imported module:?\s*(\S*)/i, css: false },
  { re: /importing a module script failed/i, css: false },
  { re: /unable to preload css for\s*(\S*)/i, css: true },
  { re: /loading css chunk\s+(\S+?)\s+failed/i, css: true },
  { re: /loading chunk\s+(\S+?)\s+failed/i, css: false },
];

// "https://x/assets/trade.spot-Bx3k9.js" → "trade.spot"
function chunkId(address: string): string {
  const file = address.split(/[?#]/, 1)[0]!.split("/").pop() ?? "";
  const base = file.replace(/\.(?:m?js|css)$/, "").replace(/-[A-Za-z0-9_]{6,}$/, "");
  return base || "?";
}

export function chunkFailure(error: unknown): ChunkFailure | null {
  if (error === null || typeof error !== "object") return null;
  const e = error as { name?: unknown; message?: unknown; type?: unknown; request?: unknown };
  const message = typeof e.message === "string" ? e.message : "";
  const named = e.name === "ChunkLoadError";
  for (const { re, css } of PATTERNS) {
    const m = re.exec(message);
    if (!m) continue;
    const captured = m[1] ?? "";
    const isUrl = /^(?:https?:|\/)/.test(captured);
    const address = typeof e.request === "string" ? e.request : isUrl ? captured : "";
    return {
      id: isUrl ? chunkId(captured) : captured || (address ? chunkId(address) : "?"),
      css,
      type: typeof e.type === "string" && e.type !== "" ? e.type : "error",
      address,
    };
  }
  if (named) return { id: "?", css: false, type: typeof e.type === "string" ? e.type : "error", address: "" };
  return null;
}
