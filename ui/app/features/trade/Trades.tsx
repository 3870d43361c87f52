import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useRef, useState } from "react";
import { fetchTrades, type MarketType, type Trade } from "./api";
import { stepDecimals } from "~/lib/decimal";
import { useFormat } from "~/lib/format";
import { useFrameScheduler } from "./frame";
import type { StreamClient, StreamMessage } from "./stream";

export const TRADE_ROWS = 30;

type Props = {
  stream: StreamClient;
  exchange: string;
  marketType: MarketType;
  symbol: string;
  tickSize: string;
  stepSize: string;
  base: string;
  quote: string;
};

// Newest first; the stream's batches are merged into the list once per frame.
export function TradesPanel(p: Props) {
  const { t, i18n } = useLingui();
  const [rows, setRows] = useState<Trade[]>([]);
  const pending = useRef<Trade[]>([]);
  const schedule = useFrameScheduler(() => {
    const add = pending.current;
    pending.current = [];
    if (add.length) setRows((old) => mergeTrades(old, add));
  });

  useEffect(() => {
    let alive = true;
    setRows([]);
    pending.current = [];
    fetchTrades(p.exchange, p.marketType, p.symbol, TRADE_ROWS)
      .then((list) => {
        if (alive) setRows((old) => mergeTrades(old, list.map(norm)));
      })
      .catch(() => undefined); // the stream fills the list anyway
    const off = p.stream.subscribe(
      { channel: "trades", exchange: p.exchange, marketType: p.marketType, symbol: p.symbol },
      (m: StreamMessage) => {
        if (m.type !== "trades" || !Array.isArray(m.trades)) return;
        for (const tr of m.trades as Trade[]) pending.current.push(norm(tr));
        if (pending.current.length > TRADE_ROWS * 4) pending.current = pending.current.slice(-TRADE_ROWS);
        schedule();
      },
    );
    return () => {
      alive = false;
      off();
    };
  }, [p.stream, p.exchange, p.marketType, p.symbol, schedule]);

  const f = useFormat();
  const pd = stepDecimals(p.tickSize || "0.01");
  const qd = stepDecimals(p.stepSize || "0.001");
  const time = new Intl.DateTimeFormat(i18n.locale, { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  return (
    <section className="trade-panel trade-trades" aria-labelledby="trades-heading">
      <header className="trade-panel-head">
        <h2 id="trades-heading">
          <Trans>Last trades</Trans>
        </h2>
      </header>
      <div className="book-cols" aria-hidden="true">
        <span>{t`Price (${p.quote})`}</span>
        <span>{t`Size (${p.base})`}</span>
        <span>{t`Time`}</span>
      </div>
      {rows.length === 0 ? (
        <p className="trade-empty">{t`No trades yet.`}</p>
      ) : (
        <ol className="trades-list" data-testid="trades">
          {rows.map((r) => (
            <li key={r.id} className={`trade-row trade-${r.side}`}>
              <span>{f.fixed(r.price, pd)}</span>
              <span>{f.fixed(r.qty, qd)}</span>
              <span>{time.format(r.time)}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function norm(t: Trade): Trade {
  return { id: String(t.id), price: t.price, qty: t.qty, quoteQty: t.quoteQty ?? "", side: t.side, time: t.time };
}

// Adds trades (oldest first) to a newest-first list without duplicates,
// keeping the list newest first by time.
export function mergeTrades(list: Trade[], addOldestFirst: Trade[]): Trade[] {
  const seen = new Set(list.map((t) => t.id));
  const fresh: Trade[] = [];
  for (let i = addOldestFirst.length - 1; i >= 0; i--) {
    const t = addOldestFirst[i];
    if (!t || seen.has(t.id)) continue;
    seen.add(t.id);
    fresh.push(t);
  }
  const merged = fresh.concat(list);
  // Stable: trades of the same millisecond keep their arrival order.
  merged.sort((a, b) => b.time - a.time);
  return merged.slice(0, TRADE_ROWS);
}
