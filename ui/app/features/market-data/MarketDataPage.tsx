import { Trans, useLingui } from "@lingui/react/macro";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import type { Exchange } from "~/api/client";
import { displayState, logoSrc } from "~/api/exchange-state";
import { PageTitle } from "~/components/PageTitle";
import { loadExchanges, resetExchanges } from "~/lib/exchanges";
import { reportDown, reportUp } from "~/lib/network";
import { usePollWhileVisible } from "~/lib/visibility";
import {
  fetchFunding,
  fetchInstrumentList,
  fetchLongShort,
  fetchOpenInterest,
  fetchPeriodCandles,
  fetchTakerVolume,
  fetchTickerList,
  type Instrument,
  type LongShortKind,
  type SeriesQuery,
  type Ticker,
} from "./api";
import { parseView, PERIODS, rangeOf, viewQuery, type Period } from "./data";
import type { Load } from "./Panel";
import { FundingPanel, LongShortPanel, OpenInterestPanel, TakerVolumePanel, type Market } from "./panels";
import { SymbolPicker } from "./SymbolPicker";
import "./market-data.css";

// The analytics refresh while the page is visible (the API caches 30 s).
export const REFRESH_MS = 60_000;

// Exchanges with perpetual futures, and the coming-soon ones (shown, not selectable).
export function futuresExchanges(list: readonly Exchange[]): Exchange[] {
  return list.filter((e) => displayState(e) === "coming_soon" || (e.marketTypes ?? []).includes("SWAP"));
}

// The default market of an exchange: BTC against USDT, else the first listed.
export function defaultSymbol(instruments: readonly Instrument[]): string | null {
  return instruments.find((i) => i.base === "BTC" && i.quote === "USDT")?.symbol ?? instruments[0]?.symbol ?? null;
}

// The long/short kinds an exchange publishes (capabilities say ACCOUNTS ...).
export function longShortKinds(ex: Exchange): LongShortKind[] {
  const all: LongShortKind[] = ["accounts", "top_accounts", "top_positions"];
  const named = (ex.capabilities?.analytics?.longShortRatio ?? []).map((k) => k.toLowerCase());
  const kinds = all.filter((k) => named.includes(k));
  return kinds.length > 0 ? kinds : ["accounts"];
}

// Loads one thing per key. A new view key shows the skeleton; a refresh of
// the same view (new request key) keeps what is shown until the answer.
function useLoad<T>(
  viewKey: string | null,
  requestKey: string,
  source: string,
  load: (signal: AbortSignal) => Promise<T>,
) {
  const [state, setState] = useState<Load<T>>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  const shown = useRef<string | null>(null);
  const fn = useRef(load);
  fn.current = load;
  useEffect(() => {
    if (viewKey === null) return;
    const fresh = shown.current !== viewKey;
    shown.current = viewKey;
    const ac = new AbortController();
    if (fresh) setState({ state: "loading" });
    fn.current(ac.signal).then(
      (data) => {
        if (ac.signal.aborted) return;
        setState({ state: "ready", data });
        reportUp(source);
      },
      () => {
        if (ac.signal.aborted) return;
        reportDown(source);
        setState((s) => (fresh || s.state !== "ready" ? { state: "error" } : s));
      },
    );
    return () => ac.abort();
  }, [viewKey, requestKey, attempt, source]);
  useEffect(() => () => reportUp(source), [source]);
  const retry = useCallback(() => {
    shown.current = null;
    setAttempt((a) => a + 1);
  }, []);
  return [state, retry] as const;
}

export function MarketDataPage() {
  const { t, i18n } = useLingui();
  const [params, setParams] = useSearchParams();
  const view = parseView(params);

  // Exchanges.
  const [exchanges, retryExchanges] = useLoad("exchanges", "", "market-data-exchanges", () => loadExchanges());
  const choices = useMemo(() => (exchanges.state === "ready" ? futuresExchanges(exchanges.data) : []), [exchanges]);
  const selectable = choices.filter((e) => displayState(e) === "available");
  const exchange = selectable.find((e) => e.slug === view.exchange) ?? selectable[0] ?? null;
  const slug = exchange?.slug ?? null;

  // Futures instruments of the chosen exchange.
  const [instruments, retryInstruments] = useLoad(slug, "", "market-data-instruments", async () => ({
    slug,
    list: await fetchInstrumentList(slug!, "SWAP"),
  }));
  const list = instruments.state === "ready" && instruments.data.slug === slug ? instruments.data.list : null;
  const symbol = list ? (list.some((i) => i.symbol === view.symbol) ? view.symbol : defaultSymbol(list)) : null;
  const inst = list?.find((i) => i.symbol === symbol) ?? null;

  const go = useCallback(
    (next: { exchange: string; symbol?: string; period: Period }, replace = false) => {
      const q = next.symbol
        ? viewQuery({ ...next, symbol: next.symbol })
        : new URLSearchParams({ exchange: next.exchange, period: next.period });
      setParams(q, { replace, preventScrollReset: true });
    },
    [setParams],
  );

  // The URL always names the view shown, so it can be linked and reloaded.
  useEffect(() => {
    if (!slug || !symbol) return;
    if (params.get("exchange") !== slug || params.get("symbol") !== symbol || params.get("period") !== view.period)
      go({ exchange: slug, symbol, period: view.period }, true);
  }, [slug, symbol, view.period, params, go]);

  // The window moves with a refresh while the page is visible.
  const [tick, setTick] = useState(0);
  usePollWhileVisible(() => setTick((n) => n + 1), REFRESH_MS, symbol !== null);
  const viewKey = slug && symbol ? `${slug}|${symbol}|${view.period}` : null;
  const q = useMemo<SeriesQuery | null>(
    () =>
      slug && symbol ? { exchange: slug, symbol, period: view.period, ...rangeOf(view.period, Date.now()) } : null,
    // tick moves the window
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [slug, symbol, view.period, tick],
  );
  const requestKey = q ? `${q.from}-${q.to}` : "";
  const kinds = exchange ? longShortKinds(exchange) : [];

  const [oi, retryOi] = useLoad(viewKey, requestKey, "market-data-open-interest", async (signal) => {
    const [points, candles] = await Promise.all([
      fetchOpenInterest(q!, signal),
      fetchPeriodCandles(q!, signal).catch(() => []),
    ]);
    return { oi: points, candles };
  });
  const [ls, retryLs] = useLoad(viewKey, requestKey, "market-data-long-short", (signal) =>
    Promise.all(kinds.map(async (kind) => ({ kind, points: await fetchLongShort(q!, kind, signal) }))),
  );
  const [taker, retryTaker] = useLoad(viewKey, requestKey, "market-data-taker-volume", (signal) =>
    fetchTakerVolume(q!, signal),
  );
  const [funding, retryFunding] = useLoad(viewKey, requestKey, "market-data-funding", (signal) =>
    fetchFunding(q!, signal),
  );
  // The predicted rate and next settlement come with the ticker (when the exchange gives them).
  const [tickers] = useLoad(slug, requestKey, "market-data-ticker", async () => ({
    slug,
    list: await fetchTickerList(slug!, "SWAP").catch(() => [] as Ticker[]),
  }));
  const ticker =
    tickers.state === "ready" && tickers.data.slug === slug
      ? (tickers.data.list.find((x) => x.symbol === symbol) ?? null)
      : null;

  const exchangeName = exchange?.name ?? "";
  const market: Market = { base: inst?.base ?? "", quote: inst?.quote ?? "", period: view.period, locale: i18n.locale };
  const badges: Record<string, string> = {
    coming_soon: t`Coming soon`,
    starting: t`Starting`,
    maintenance: t`Unavailable`,
    unavailable: t`Unavailable`,
  };
  const periodLabel: Record<Period, string> = { "5m": t`5m`, "15m": t`15m`, "1h": t`1h`, "4h": t`4h`, "1d": t`1D` };

  const failed = (
    <div className="notice notice--error" role="alert">
      <p className="notice-title">
        <Trans>Network anomaly</Trans>
      </p>
      <p>
        <Trans>Market data could not be loaded. Check your connection and try again.</Trans>
      </p>
      <button
        type="button"
        className="button"
        onClick={() => {
          if (exchanges.state === "error") {
            resetExchanges();
            retryExchanges();
          } else retryInstruments();
        }}
      >
        <Trans>Retry</Trans>
      </button>
    </div>
  );

  return (
    <div className="page md-page">
      <PageTitle page={t`Market Data`} />
      <div className="md-title">
        <h1>{t`Market Data`}</h1>
        {exchange && symbol ? (
          <p className="md-subtitle" data-testid="md-subtitle">
            <Trans>
              {symbol} perpetual on {exchangeName}
            </Trans>
          </p>
        ) : null}
      </div>
      {exchanges.state === "loading" ? (
        <div className="md-skeleton md-skeleton--bar" role="status" aria-busy="true">
          <span className="visually-hidden">
            <Trans>Loading…</Trans>
          </span>
        </div>
      ) : exchanges.state === "error" ? (
        failed
      ) : selectable.length === 0 ? (
        <p className="notice">
          <Trans>No futures exchange is available right now.</Trans>
        </p>
      ) : (
        <>
          <div className="md-toolbar">
            <div className="md-exchanges" role="group" aria-label={t`Exchange`} data-testid="exchange-picker">
              {choices.map((e) => {
                const badge = badges[displayState(e)] ?? null;
                const logo = logoSrc(e.logoSvg);
                return (
                  <button
                    key={e.slug}
                    type="button"
                    className="md-exchange"
                    aria-pressed={e.slug === slug}
                    disabled={badge !== null}
                    data-exchange={e.slug}
                    onClick={() => go({ exchange: e.slug, period: view.period })}
                  >
                    {logo ? <img src={logo} alt="" width={18} height={18} /> : null}
                    <span>{e.name}</span>
                    {badge ? <span className="badge badge--coming_soon">{badge}</span> : null}
                  </button>
                );
              })}
            </div>
            {list && symbol ? (
              <SymbolPicker
                instruments={list}
                value={symbol}
                onChange={(s) => go({ exchange: slug!, symbol: s, period: view.period })}
              />
            ) : null}
            <div className="md-periods" role="group" aria-label={t`Period`} data-testid="period-picker">
              {PERIODS.map((p) => (
                <button
                  key={p}
                  type="button"
                  aria-pressed={p === view.period}
                  data-period={p}
                  onClick={() => slug && go({ exchange: slug, symbol: symbol ?? undefined, period: p })}
                >
                  {periodLabel[p]}
                </button>
              ))}
            </div>
          </div>
          {instruments.state === "error" ? (
            failed
          ) : list && !symbol ? (
            <p className="notice">
              <Trans>This exchange lists no perpetual futures.</Trans>
            </p>
          ) : (
            <div className="md-grid">
              <OpenInterestPanel m={market} load={oi} onRetry={retryOi} />
              <LongShortPanel m={market} load={ls} onRetry={retryLs} />
              <TakerVolumePanel m={market} load={taker} onRetry={retryTaker} />
              <FundingPanel m={market} load={funding} onRetry={retryFunding} ticker={ticker} />
            </div>
          )}
        </>
      )}
    </div>
  );
}
