// Client of the BFF's live stream (GET /api/v1/stream, docs/stream-api.md):
// one WebSocket per page carrying every subscription, re-opened with a
// backoff when it drops, every subscription sent again on reopen (a book
// then starts over with a snapshot).

export type Channel = "book" | "trades" | "ticker" | "candles";

// The signed-in member's own account on an exchange (docs/stream-api.md,
// "Private channels"): the session cookie of the handshake names the member,
// a subscription names only the channel and the exchange.
export type PrivateChannel = "orders" | "fills" | "positions" | "balances" | "account";

export type MarketSubscription = {
  channel: Channel;
  exchange: string;
  marketType: string;
  symbol: string;
  interval?: string;
  depth?: number;
  grouping?: string;
};

export type PrivateSubscription = { channel: PrivateChannel; exchange: string };

export type Subscription = MarketSubscription | PrivateSubscription;

// Any server message; data messages name their stream with the fields of
// Subscription.
export type StreamMessage = { type: string; [k: string]: unknown };

export type ConnectionState = "connecting" | "open" | "closed";

type Handler = (m: StreamMessage) => void;

type Entry = { sub: Subscription; handlers: Set<Handler>; id: string };

export type SocketLike = {
  readyState: number;
  send(data: string): void;
  close(code?: number): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
};

export type SocketFactory = (url: string) => SocketLike;

const OPEN = 1;
const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 5_000;

export function subscriptionKey(s: Partial<MarketSubscription> | { [k: string]: unknown }): string {
  const m = s as Partial<MarketSubscription>;
  return [m.channel, m.exchange, m.marketType ?? "", m.symbol ?? "", m.interval ?? "", m.depth ?? "", m.grouping ?? ""].join("|");
}

export function streamURL(origin: string): string {
  return `${origin.replace(/^http/, "ws")}/api/v1/stream`;
}

export class StreamClient {
  private socket: SocketLike | null = null;
  private entries = new Map<string, Entry>();
  private byId = new Map<string, string>();
  // Server-side spelling of a subscription (defaults filled in) -> ours.
  private aliases = new Map<string, string>();
  private stateListeners = new Set<(s: ConnectionState) => void>();
  private state: ConnectionState = "closed";
  private backoff = MIN_BACKOFF_MS;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly factory: SocketFactory = (u) => new WebSocket(u) as unknown as SocketLike,
  ) {}

  get connectionState(): ConnectionState {
    return this.state;
  }

  onState(listener: (s: ConnectionState) => void): () => void {
    this.stateListeners.add(listener);
    listener(this.state);
    return () => this.stateListeners.delete(listener);
  }

  // Subscribes (or joins an identical subscription); the returned function
  // leaves it, unsubscribing on the server when the last handler leaves.
  subscribe(sub: Subscription, handler: Handler): () => void {
    const key = subscriptionKey(sub);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { sub, handlers: new Set(), id: `s${this.nextId++}` };
      this.entries.set(key, entry);
      this.byId.set(entry.id, key);
      this.send({ op: "subscribe", id: entry.id, ...sub });
    }
    entry.handlers.add(handler);
    this.ensureOpen();
    const e = entry;
    return () => {
      e.handlers.delete(handler);
      if (e.handlers.size > 0 || this.entries.get(key) !== e) return;
      this.entries.delete(key);
      this.byId.delete(e.id);
      this.send({ op: "unsubscribe", id: `u${e.id}`, ...e.sub });
      if (this.entries.size === 0) this.scheduleIdleClose();
    };
  }

  // Asks the server for a fresh start of one subscription (a book gap).
  resubscribe(sub: Subscription): void {
    const key = subscriptionKey(sub);
    const e = this.entries.get(key);
    if (!e) return;
    this.send({ op: "unsubscribe", id: `r${e.id}`, ...e.sub });
    this.send({ op: "subscribe", id: e.id, ...e.sub });
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.socket?.close(1000);
    this.socket = null;
    this.setState("closed");
  }

  private scheduleIdleClose(): void {
    // A page that moves to another market subscribes again at once; only
    // close when nothing came back in a while.
    setTimeout(() => {
      if (this.entries.size === 0 && this.socket) {
        this.socket.close(1000);
        this.socket = null;
        this.setState("closed");
      }
    }, 10_000);
  }

  private setState(s: ConnectionState): void {
    if (this.state === s) return;
    this.state = s;
    for (const l of this.stateListeners) l(s);
  }

  private send(op: object): void {
    if (this.socket && this.socket.readyState === OPEN) this.socket.send(JSON.stringify(op));
    // Otherwise the op goes out from onopen with every other subscription.
  }

  private ensureOpen(): void {
    if (this.socket || this.closed || this.retryTimer) return;
    this.setState("connecting");
    const ws = this.factory(this.url);
    this.socket = ws;
    ws.onopen = () => {
      this.backoff = MIN_BACKOFF_MS;
      this.setState("open");
      for (const e of this.entries.values()) ws.send(JSON.stringify({ op: "subscribe", id: e.id, ...e.sub }));
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data !== "string") return;
      let data: unknown;
      try {
        data = JSON.parse(ev.data);
      } catch {
        return;
      }
      for (const m of Array.isArray(data) ? data : [data]) this.dispatch(m as StreamMessage);
    };
    ws.onerror = () => undefined; // onclose follows
    ws.onclose = () => {
      if (this.socket !== ws) return;
      this.socket = null;
      this.setState("closed");
      if (this.closed || this.entries.size === 0) return;
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.ensureOpen();
      }, this.backoff);
      this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    };
  }

  private dispatch(m: StreamMessage): void {
    if (!m || typeof m !== "object") return;
    let key: string | undefined;
    if (m.type === "error" || m.type === "subscribed") {
      key = typeof m.id === "string" ? this.byId.get(m.id) : undefined;
      if (key && m.type === "subscribed") this.aliases.set(subscriptionKey(m as Partial<Subscription>), key);
    } else if (typeof m.channel === "string") {
      const k = subscriptionKey(m as Partial<Subscription>);
      key = this.aliases.get(k) ?? k;
    }
    if (!key) return;
    const e = this.entries.get(key);
    if (!e) return;
    for (const h of e.handlers) h(m);
  }
}

let shared: StreamClient | null = null;

// The page's one stream connection.
export function sharedStream(): StreamClient {
  shared ??= new StreamClient(streamURL(window.location.origin));
  return shared;
}
