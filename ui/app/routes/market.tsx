import { Trans, useLingui } from "@lingui/react/macro";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import type { Exchange, MarketType, Ticker } from "~/api/client";
import { fetchInstrumentList, fetchTickerList } from "~/api/queries";
import { displayState, logoSrc } from "~/api/exchange-state";
import { MarketsTable } from "~/components/MarketsTable";
import { PageTitle } from "~/components/PageTitle";
import { sharedStream, type StreamMessage } from "~/features/trade/stream";
import { loadExchanges, resetExchanges } from "~/lib/exchanges";
import { useFavorites } from "~/lib/favorites";
import { applyTicker, buildRows, filterRows, type MarketRow, type TickerFields } from "~/lib/markets";
import { reportDown, reportUp } from "~/lib/network";
import { nextTickDirection } from "~/lib/tick";
import { usePollWhileVisible } from "~/lib/visibility";

// Refresh interval of the REST tickers (spec: 10 s), while the page is visible.
export const TICKER_REFRESH_MS = 10_000;
// Live ticker subscriptions follow the rows on screen, at most this many
// (the stream allows 64 per connection).
export const MAX_LIVE = 40;
// A stream that stays down this long is reported as a network anomaly.
const STREAM_DOWN_MS = 5_000;

type Source = { exchange: Exchange; type: MarketType };

function sourcesOf(exchanges: Exchange[]): Source[] {
  const out: Source[] = [];
  for (const ex of exchanges) {
    if (displayState(ex) !== "available") continue;
    for (const m of ex.marketTypes ?? []) if (m === "SPOT" || m === "SWAP") out.push({ exchange: ex, type: m });
  }
  return out;
}

type Load = { state: "loading" } | { state: "error" } | { state: "ready" };

function useMarketRows() {
  const [rows, setRows] = useState<MarketRow[]>([]);
  const [load, setLoad] = useState<Load>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  const sources = useRef<Source[]>([]);

  useEffect(() => {
    let live = true;
    setLoad({ state: "loading" });
    (async () => {
      const exchanges = await loadExchanges();
      const srcs = sourcesOf(exchanges);
      sources.current = srcs;
      const parts = await Promise.allSettled(
        srcs.map(async ({ exchange, type }) => {
          const [instruments, tickers] = await Promise.all([
            fetchInstrumentList(exchange.slug, type),
            fetchTickerList(exchange.slug, type).catch(() => [] as Ticker[]),
          ]);
          return buildRows(exchange, logoSrc(exchange.logoSvg), type, instruments, tickers);
        }),
      );
      if (!live) return;
      const ok = parts.filter((p) => p.status === "fulfilled");
      if (srcs.length > 0 && ok.length === 0) throw new Error("no market could be loaded");
      setRows(ok.flatMap((p) => p.value));
      setLoad({ state: "ready" });
      reportUp("markets-api");
    })().catch(() => {
      if (!live) return;
      resetExchanges();
      setLoad({ state: "error" });
      reportDown("markets-api");
    });
    return () => {
      live = false;
    };
  }, [attempt]);

  useEffect(() => () => reportUp("markets-api"), []);

  const merge = useCallback((updates: Map<string, TickerFields>) => {
    if (updates.size === 0) return;
    setRows((prev) => {
      let changed = false;
      const next = prev.map((r) => {
        const u = updates.get(r.id);
        if (!u) return r;
        const n = applyTicker(r, u, nextTickDirection);
        if (n !== r) changed = true;
        return n;
      });
      return changed ? next : prev;
    });
  }, []);

  // REST refresh of every market's ticker.
  const refresh = useCallback(() => {
    for (const { exchange, type } of sources.current) {
      fetchTickerList(exchange.slug, type).then(
        (tickers) => {
          reportUp("markets-api");
          merge(new Map(tickers.map((t) => [`${exchange.slug}:${type}:${t.symbol}`, t])));
        },
        () => reportDown("markets-api"),
      );
    }
  }, [merge]);

  return { rows, load, retry: () => setAttempt((a) => a + 1), merge, refresh };
}

// Subscribes the stream's ticker channel for the rows on screen; updates are
// applied once per animation frame.
function useLiveTickers(visible: MarketRow[], merge: (u: Map<string, TickerFields>) => void) {
  const key = visible
    .slice(0, MAX_LIVE)
    .map((r) => r.id)
    .join(",");
  const pending = useRef(new Map<string, TickerFields>());
  const frame = useRef<number | null>(null);
  useEffect(() => {
    if (key === "") return;
    const stream = sharedStream();
    const flush = () => {
      frame.current = null;
      const u = pending.current;
      pending.current = new Map();
      merge(u);
    };
    const offs = key.split(",").map((id) => {
      const [exchange, marketType, ...rest] = id.split(":");
      const symbol = rest.join(":");
      return stream.subscribe({ channel: "ticker", exchange: exchange!, marketType: marketType!, symbol }, (m: StreamMessage) => {
        if (m.type !== "ticker" || !m.ticker || typeof m.ticker !== "object") return;
        // Bounded: one pending entry per subscribed row, the latest wins.
        pending.current.set(id, { ...pending.current.get(id), ...(m.ticker as TickerFields) });
        frame.current ??= requestAnimationFrame(flush);
      });
    });
    return () => {
      for (const off of offs) off();
      if (frame.current !== null) cancelAnimationFrame(frame.current);
      frame.current = null;
      pending.current = new Map();
    };
  }, [key, merge]);

  // A stream that stays down is a network anomaly.
  useEffect(() => {
    if (key === "") return;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const off = sharedStream().onState((s) => {
      if (s === "open") {
        if (timer) clearTimeout(timer);
        timer = null;
        reportUp("markets-stream");
      } else if (!timer) {
        timer = setTimeout(() => reportDown("markets-stream"), STREAM_DOWN_MS);
      }
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
      reportUp("markets-stream");
    };
  }, [key === ""]); // eslint-disable-line react-hooks/exhaustive-deps
}

export default function Markets() {
  const { t } = useLingui();
  const [params, setParams] = useSearchParams();
  const type: MarketType = params.get("tab") === "spot" ? "SPOT" : "SWAP";
  const [query, setQuery] = useState("");
  const [favoritesOnly, setFavoritesOnly] = useState(false);
  const [favorites, toggleFavorite] = useFavorites();
  const { rows, load, retry, merge, refresh } = useMarketRows();
  const [visible, setVisible] = useState<MarketRow[]>([]);
  usePollWhileVisible(refresh, TICKER_REFRESH_MS, load.state === "ready");
  useLiveTickers(visible, merge);

  const shown = useMemo(
    () => filterRows(rows, { type, query, favoritesOnly, favorites }),
    [rows, type, query, favoritesOnly, favorites],
  );
  const onVisibleChange = useCallback((v: MarketRow[]) => {
    setVisible((prev) => (prev.length === v.length && prev.every((r, i) => r.id === v[i]!.id) ? prev : v));
  }, []);

  const tab = (tt: MarketType, label: string) => (
    <button
      type="button"
      role="tab"
      aria-selected={type === tt}
      className={`tab${type === tt ? " tab--active" : ""}`}
      onClick={() => setParams(tt === "SPOT" ? { tab: "spot" } : {}, { replace: true })}
    >
      {label}
    </button>
  );

  return (
    <div className="page markets-page">
      <PageTitle page={t`Markets`} />
      <h1>{t`Markets`}</h1>
      <div className="markets-toolbar">
        <div role="tablist" aria-label={t`Market type`} className="tabs">
          {tab("SWAP", t`Futures`)}
          {tab("SPOT", t`Spot`)}
        </div>
        <label className="search">
          <span className="visually-hidden">{t`Search markets`}</span>
          <input type="search" placeholder={t`Search markets`} value={query} onChange={(e) => setQuery(e.currentTarget.value)} />
        </label>
        <label className="checkbox">
          <input type="checkbox" checked={favoritesOnly} onChange={(e) => setFavoritesOnly(e.currentTarget.checked)} />
          {t`Favorites only`}
        </label>
      </div>
      {load.state === "loading" ? (
        <p className="notice" role="status" aria-busy="true">
          <Trans>Loading markets…</Trans>
        </p>
      ) : load.state === "error" ? (
        <div className="notice notice--error" role="alert">
          <p className="notice-title">
            <Trans>Network anomaly</Trans>
          </p>
          <p>
            <Trans>The markets could not be loaded. Check your connection and try again.</Trans>
          </p>
          <button type="button" className="button" onClick={retry}>
            <Trans>Retry</Trans>
          </button>
        </div>
      ) : (
        <>
          <p className="markets-count" role="status">
            <Trans>{shown.length} markets</Trans>
          </p>
          {shown.length === 0 ? (
            <p className="notice">
              <Trans>No markets match.</Trans>
            </p>
          ) : (
            <MarketsTable rows={shown} favorites={favorites} onToggleFavorite={toggleFavorite} onVisibleChange={onVisibleChange} />
          )}
        </>
      )}
    </div>
  );
}
