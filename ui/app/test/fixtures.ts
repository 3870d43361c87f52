import type { Exchange } from "~/api/client";

const svg = (color: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="${color}"/></svg>`;

export function exchange(over: Partial<Exchange> & Pick<Exchange, "key" | "slug" | "name">): Exchange {
  return {
    status: "available",
    pluginState: "running",
    pluginVersion: "1.0.0",
    logoSvg: svg("#123456"),
    website: "https://example.com/",
    marketTypes: ["SPOT", "SWAP"],
    capabilities: {},
    ...over,
  };
}

export const demoExchanges: Exchange[] = [
  exchange({ key: 100, slug: "reference", name: "Reference Exchange" }),
  exchange({ key: 3, slug: "bybit", name: "Bybit", status: "coming_soon", pluginState: "none" }),
  exchange({ key: 2, slug: "okx", name: "OKX", pluginState: "failed", marketTypes: ["SWAP"] }),
];

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": status >= 400 ? "application/problem+json" : "application/json" },
  });
}
