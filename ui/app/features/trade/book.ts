import { compareDecimal, dec, decimalString, isZero, subDecimals } from "~/lib/decimal";

export type Level = [price: string, qty: string];

export type BookMessage = {
  type: "snapshot" | "update";
  seq: number;
  prevSeq: number;
  time?: number;
  bids: Level[];
  asks: Level[];
};

export type BookRow = { price: string; qty: string; total: string; depth: number };

export type BookView = {
  bids: BookRow[]; // best (highest) first
  asks: BookRow[]; // best (lowest) first
  spread: string | null;
  seq: number;
  time: number;
};

export type ApplyResult = "applied" | "gap" | "ignored";

// A client copy of one book subscription, kept from a snapshot and the
// chained updates that follow it (docs/stream-api.md). An update whose
// prevSeq is not the last seq is a gap: the copy is dropped and the caller
// resubscribes.
export class OrderBook {
  private bids = new Map<string, string>();
  private asks = new Map<string, string>();
  private lastSeq: number | null = null;
  private lastTime = 0;

  get ready(): boolean {
    return this.lastSeq !== null;
  }

  get seq(): number | null {
    return this.lastSeq;
  }

  reset(): void {
    this.bids.clear();
    this.asks.clear();
    this.lastSeq = null;
  }

  apply(m: BookMessage): ApplyResult {
    if (m.type === "snapshot") {
      this.bids.clear();
      this.asks.clear();
      setLevels(this.bids, m.bids);
      setLevels(this.asks, m.asks);
      this.lastSeq = m.seq;
      this.lastTime = m.time ?? 0;
      return "applied";
    }
    if (this.lastSeq === null) return "ignored";
    if (m.prevSeq !== this.lastSeq) {
      this.reset();
      return "gap";
    }
    setLevels(this.bids, m.bids);
    setLevels(this.asks, m.asks);
    this.lastSeq = m.seq;
    this.lastTime = m.time ?? this.lastTime;
    return "applied";
  }

  // The best `rows` levels a side with cumulative totals; depth is each
  // row's cumulative total relative to the larger side's total (0..1).
  view(rows: number): BookView {
    const bids = sortedLevels(this.bids, -1).slice(0, rows);
    const asks = sortedLevels(this.asks, 1).slice(0, rows);
    const bidRows = cumulate(bids);
    const askRows = cumulate(asks);
    const maxTotal = Math.max(lastTotal(bidRows), lastTotal(askRows));
    for (const r of bidRows) r.depth = maxTotal > 0 ? Number(r.total) / maxTotal : 0;
    for (const r of askRows) r.depth = maxTotal > 0 ? Number(r.total) / maxTotal : 0;
    let spread: string | null = null;
    const bestBid = bids[0];
    const bestAsk = asks[0];
    if (bestBid && bestAsk) {
      spread = decimalString(subDecimals(bestAsk[0], bestBid[0]));
    }
    return { bids: bidRows, asks: askRows, spread, seq: this.lastSeq ?? 0, time: this.lastTime };
  }
}

function setLevels(side: Map<string, string>, levels: Level[]): void {
  for (const [price, qty] of levels) {
    const key = canonicalPrice(price);
    if (isZero(qty)) side.delete(key);
    else side.set(key, qty);
  }
}

// "65000.10" and "65000.1" are the same level.
function canonicalPrice(p: string): string {
  if (!p.includes(".")) return p;
  const t = p.replace(/0+$/, "");
  return t.endsWith(".") ? t.slice(0, -1) : t;
}

function sortedLevels(side: Map<string, string>, dir: 1 | -1): Level[] {
  return [...side.entries()].sort((a, b) => dir * compareDecimal(a[0], b[0]));
}

function cumulate(levels: Level[]): BookRow[] {
  let sum = dec("0");
  return levels.map(([price, qty]) => {
    sum = sum.plus(dec(qty));
    return { price, qty, total: decimalString(sum), depth: 0 };
  });
}

function lastTotal(rows: BookRow[]): number {
  const last = rows[rows.length - 1];
  return last ? Number(last.total) : 0;
}
