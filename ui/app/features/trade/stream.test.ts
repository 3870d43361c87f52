import { afterEach, describe, expect, it, vi } from "vitest";
import { StreamClient, type SocketLike } from "./stream";

class FakeSocket implements SocketLike {
  readyState = 0;
  sent: Record<string, unknown>[] = [];
  onopen: ((ev: unknown) => void) | null = null;
  onclose: ((ev: unknown) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  constructor(readonly url: string) {}
  send(data: string) {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }
  close() {
    this.readyState = 3;
    this.onclose?.({});
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  push(m: unknown) {
    this.onmessage?.({ data: JSON.stringify(m) });
  }
}

afterEach(() => vi.useRealTimers());

const book = { channel: "book" as const, exchange: "binance", marketType: "SWAP", symbol: "BTCUSDT", depth: 20, grouping: "0.1" };

describe("stream client", () => {
  it("subscribes once per stream, routes messages and frames of several messages", () => {
    const sockets: FakeSocket[] = [];
    const c = new StreamClient("ws://x/api/v1/stream", (u) => {
      const s = new FakeSocket(u);
      sockets.push(s);
      return s;
    });
    const a: unknown[] = [];
    const b: unknown[] = [];
    const offA = c.subscribe(book, (m) => a.push(m.type));
    const offB = c.subscribe(book, (m) => b.push(m.type));
    const tick: unknown[] = [];
    c.subscribe({ channel: "ticker", exchange: "binance", marketType: "SWAP", symbol: "BTCUSDT" }, (m) => tick.push(m.type));
    expect(sockets).toHaveLength(1);
    const s = sockets[0]!;
    expect(s.sent).toEqual([]); // nothing before open
    s.open();
    expect(s.sent.map((o) => [o.op, o.channel])).toEqual([
      ["subscribe", "book"],
      ["subscribe", "ticker"],
    ]);
    // The server may spell the subscription differently (defaults filled
    // in); the reply's id ties it to ours.
    s.push({ type: "subscribed", id: s.sent[0]!.id, ...book, grouping: "0.10", subscriptions: 2 });
    s.push([
      { type: "snapshot", ...book, grouping: "0.10", seq: 1, prevSeq: 0, bids: [], asks: [] },
      { type: "ticker", channel: "ticker", exchange: "binance", marketType: "SWAP", symbol: "BTCUSDT", seq: 1, ticker: {} },
      { type: "update", ...book, grouping: "0.10", seq: 2, prevSeq: 1, bids: [], asks: [] },
      { type: "ticker", channel: "ticker", exchange: "okx", marketType: "SWAP", symbol: "BTC-USDT-SWAP", seq: 1, ticker: {} },
    ]);
    expect(a).toEqual(["subscribed", "snapshot", "update"]);
    expect(b).toEqual(a);
    expect(tick).toEqual(["ticker"]);

    offA();
    expect(s.sent.filter((o) => o.op === "unsubscribe")).toHaveLength(0); // B still listens
    offB();
    expect(s.sent.filter((o) => o.op === "unsubscribe").map((o) => o.channel)).toEqual(["book"]);
  });

  it("reconnects with a backoff and subscribes again", () => {
    vi.useFakeTimers();
    const sockets: FakeSocket[] = [];
    const states: string[] = [];
    const c = new StreamClient("ws://x", (u) => {
      const s = new FakeSocket(u);
      sockets.push(s);
      return s;
    });
    c.onState((st) => states.push(st));
    c.subscribe(book, () => undefined);
    sockets[0]!.open();
    sockets[0]!.close();
    expect(states).toEqual(["closed", "connecting", "open", "closed"]);
    vi.advanceTimersByTime(499);
    expect(sockets).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sockets).toHaveLength(2);
    sockets[1]!.open();
    expect(sockets[1]!.sent.map((o) => o.op)).toEqual(["subscribe"]);
    c.resubscribe(book);
    expect(sockets[1]!.sent.map((o) => o.op)).toEqual(["subscribe", "unsubscribe", "subscribe"]);
    c.close();
    vi.advanceTimersByTime(10_000);
    expect(sockets).toHaveLength(2);
  });
});
