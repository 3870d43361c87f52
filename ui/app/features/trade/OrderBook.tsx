import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useMemo, useRef, useState } from "react";
import type { MarketType } from "./api";
import { OrderBook as Book, type BookMessage, type BookRow, type BookView } from "./book";
import { stepDecimals } from "~/lib/decimal";
import { useFormat, type Formatters } from "~/lib/format";
import { useFrameScheduler } from "./frame";
import { DEFAULT_DEPTH_STEPS, groupingFor, groupingOptions } from "./grouping";
import { useTradeLayout } from "./trade-layout";
import type { StreamClient, StreamMessage, Subscription } from "./stream";

export const BOOK_ROWS = 15;
const BOOK_DEPTH = 20;

type Props = {
  stream: StreamClient;
  exchange: string;
  marketType: MarketType;
  symbol: string;
  tickSize: string;
  stepSize: string;
  base: string;
  quote: string;
  last?: string;
  lastDirection: "up" | "down" | "flat";
  onFilled?: () => void;
};

export function OrderBookPanel(p: Props) {
  const { t } = useLingui();
  // The grouping is part of the saved trade layout (trade-layout.ts).
  const [layout, changeLayout] = useTradeLayout();
  const steps = layout.depthSteps;
  const options = useMemo(() => groupingOptions(p.tickSize), [p.tickSize]);
  const grouping = groupingFor(p.tickSize, steps);
  const [view, setView] = useState<BookView | null>(null);
  const [stale, setStale] = useState(false);
  const book = useRef(new Book());
  const filled = useRef(false);
  const onFilled = useRef(p.onFilled);
  onFilled.current = p.onFilled;
  const schedule = useFrameScheduler(() => {
    const b = book.current;
    setView(b.ready ? b.view(BOOK_ROWS) : null);
    if (b.ready && !filled.current) {
      filled.current = true;
      onFilled.current?.();
    }
  });

  useEffect(() => {
    const sub: Subscription = {
      channel: "book",
      exchange: p.exchange,
      marketType: p.marketType,
      symbol: p.symbol,
      depth: BOOK_DEPTH,
      ...(grouping ? { grouping: grouping.size } : {}),
    };
    const b = new Book();
    book.current = b;
    setView(null);
    const off = p.stream.subscribe(sub, (m: StreamMessage) => {
      if (m.type === "snapshot" || m.type === "update") {
        if (b.apply(m as unknown as BookMessage) === "gap") p.stream.resubscribe(sub);
        else setStale(false);
        schedule();
      } else if (m.type === "status" && (m.state === "resyncing" || m.state === "reconnecting")) {
        if (m.state === "resyncing") b.reset();
        setStale(true);
        schedule();
      } else if (m.type === "status" && m.state === "live") {
        setStale(false);
      }
    });
    return off;
  }, [p.stream, p.exchange, p.marketType, p.symbol, grouping?.size, schedule]);

  const f = useFormat();
  const priceDecimals = grouping?.decimals ?? 2;
  const qtyDecimals = stepDecimals(p.stepSize || "0.001");
  const asks = view ? [...view.asks].reverse() : [];
  return (
    <section className="trade-panel trade-book" aria-labelledby="book-heading" data-stale={stale || undefined}>
      <header className="trade-panel-head">
        <h2 id="book-heading">
          <Trans>Order book</Trans>
        </h2>
        {options.length > 0 && (
          <label className="trade-select">
            <span className="visually-hidden">{t`Price grouping`}</span>
            <select value={grouping?.steps ?? DEFAULT_DEPTH_STEPS} onChange={(e) => changeLayout({ depthSteps: Number(e.target.value) })} data-testid="book-grouping">
              {options.map((o) => (
                <option key={o.steps} value={o.steps}>
                  {o.size}
                </option>
              ))}
            </select>
          </label>
        )}
      </header>
      <div className="book-cols" aria-hidden="true">
        <span>{t`Price (${p.quote})`}</span>
        <span>{t`Size (${p.base})`}</span>
        <span>{t`Total (${p.base})`}</span>
      </div>
      {!view ? (
        <p className="trade-empty">{stale ? t`Order book resyncing…` : t`Loading order book…`}</p>
      ) : (
        <>
          <ol className="book-side book-asks" data-testid="book-asks">
            {asks.map((r) => (
              <Row key={r.price} r={r} side="ask" pd={priceDecimals} qd={qtyDecimals} f={f} />
            ))}
          </ol>
          <div className="book-mid" data-testid="book-spread">
            <strong className={`tick-${p.lastDirection}`}>{p.last ? f.fixed(p.last, stepDecimals(p.tickSize || "0.01")) : "—"}</strong>
            <span>
              <Trans>Spread</Trans> {view.spread ?? "—"}
            </span>
          </div>
          <ol className="book-side book-bids" data-testid="book-bids" data-seq={view.seq}>
            {view.bids.map((r) => (
              <Row key={r.price} r={r} side="bid" pd={priceDecimals} qd={qtyDecimals} f={f} />
            ))}
          </ol>
        </>
      )}
    </section>
  );
}

function Row({ r, side, pd, qd, f }: { r: BookRow; side: "bid" | "ask"; pd: number; qd: number; f: Formatters }) {
  return (
    <li className={`book-row book-${side}`} style={{ ["--depth" as string]: `${(r.depth * 100).toFixed(1)}%` }}>
      <span className="book-price">{f.fixed(r.price, pd)}</span>
      <span>{f.fixed(r.qty, qd)}</span>
      <span>{f.fixed(r.total, qd)}</span>
    </li>
  );
}
