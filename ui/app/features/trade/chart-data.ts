import type { KLineData } from "klinecharts";
import type { Candle } from "./api";

// Chart values are display coordinates: the chart library draws with
// numbers. Nothing computed from them is sent back or summed as money.
export function toKLine(c: Pick<Candle, "openTime" | "open" | "high" | "low" | "close" | "volume" | "quoteVolume">): KLineData {
  return {
    timestamp: c.openTime,
    open: Number(c.open),
    high: Number(c.high),
    low: Number(c.low),
    close: Number(c.close),
    volume: Number(c.volume),
    turnover: Number(c.quoteVolume),
  };
}

// Page sizes for candle requests: the exchange's page limit, capped by
// the API's 1500; OKX-style small pages when the exchange allows few.
export function candlePageSize(pageLimit: number | undefined): number {
  const n = pageLimit && pageLimit > 0 ? pageLimit : 500;
  return Math.min(n, 1500);
}
