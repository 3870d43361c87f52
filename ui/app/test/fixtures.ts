import type { Exchange } from "~/api/client";

const svg = (color: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="${color}"/></svg>`;

export const capabilities: Exchange["capabilities"] = {
  marketTypes: ["SPOT", "SWAP"],
  trading: {
    enabled: true,
    orderTypes: ["LIMIT", "MARKET"],
    timeInForce: ["GTC"],
    triggerPriceTypes: [],
    reduceOnly: true,
    closePosition: true,
    tpsl: false,
    amend: true,
    cancelAll: true,
    idempotentClientOrderId: true,
    marginModes: ["CROSS"],
    positionModes: ["ONE_WAY"],
    selfTradePrevention: false,
  },
  wallet: { balances: true, transfer: true, deposit: false, withdraw: false, convert: false },
  intervals: ["1m", "1h", "1d"],
  analytics: { openInterest: false, longShortRatio: [], takerVolume: false, fundingRateHistory: false, periods: [] },
  pageLimits: { candles: 1000, trades: 500, orderBookDepth: 200, orderHistory: 100, fills: 100, analytics: 500, fundingRateHistory: 100 },
  streams: { book: true, trades: true, ticker: true, candles: true, markPrice: false, account: true },
};

export function exchange(over: Partial<Exchange> & Pick<Exchange, "key" | "slug" | "name">): Exchange {
  return {
    status: "available",
    pluginState: "running",
    pluginVersion: "1.0.0",
    logoSvg: svg("#123456"),
    website: "https://example.com/",
    marketTypes: ["SPOT", "SWAP"],
    capabilities,
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

type Handler = (url: URL) => Response | Promise<Response>;

// A fake BFF: answers by path; unknown paths get a 404 problem. Each call is
// recorded in `calls` as "METHOD path?query".
export function fakeApi(routes: Record<string, Handler>) {
  const calls: string[] = [];
  const fetch = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    calls.push(`${req.method} ${url.pathname}${url.search}`);
    const h = routes[url.pathname];
    if (!h) return jsonResponse({ title: "Not Found", status: 404, detail: url.pathname }, 404);
    return h(url);
  };
  return { fetch, calls };
}

export function instrument(symbol: string, base: string, quote: string, type: "SPOT" | "SWAP" = "SWAP") {
  return {
    symbol,
    type,
    base,
    quote,
    settle: type === "SWAP" ? quote : "",
    status: "TRADING",
    tickSize: "0.1",
    minPrice: "0.1",
    maxPrice: "1000000",
    stepSize: "0.001",
    minQty: "0.001",
    maxQty: "1000",
    marketStepSize: "0.001",
    marketMinQty: "0.001",
    marketMaxQty: "100",
    minNotional: "5",
    contractValue: "1",
    contractValueAsset: base,
    maxLeverage: type === "SWAP" ? "50" : "1",
    family: "",
    listedTime: 0,
  };
}

export function ticker(symbol: string, last: string, changePct24h: string, quoteVolume24h: string, type: "SPOT" | "SWAP" = "SWAP") {
  return {
    symbol,
    type,
    last,
    open24h: last,
    high24h: last,
    low24h: last,
    volume24h: "1",
    quoteVolume24h,
    changePct24h,
    bid: last,
    bidQty: "1",
    ask: last,
    askQty: "1",
    markPrice: "",
    indexPrice: "",
    fundingRate: "",
    nextFundingTime: 0,
    openInterest: "",
    time: 1,
  };
}
