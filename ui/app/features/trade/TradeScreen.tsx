import { Trans, useLingui } from "@lingui/react/macro";
import { createContext, lazy, Suspense, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import { Link, useLocation, useNavigate } from "react-router";
import { loginPath } from "~/features/auth/return-to";
import { useMe } from "~/lib/session";
import { fetchExchanges } from "~/api/queries";
import { displayState } from "~/api/exchange-state";
import { PageTitle } from "~/components/PageTitle";
import { defaultSymbol, fetchInstruments, fetchTickers, type Exchange, type Instrument, type MarketType, type Ticker } from "./api";
import { Chart } from "./Chart";
import { CHART_TYPE_IDS, CHART_TYPES, parseChartType, type ChartTypeId } from "./chart-types";
import { useFrameScheduler } from "./frame";
import { availableResolutions, pickResolution } from "./intervals";
import { MarketHeader } from "./Header";
import { OrderBookPanel } from "./OrderBook";
import { PairList } from "./PairList";
import { RulesPanel } from "./RulesPanel";
import { sharedStream, type ConnectionState, type StreamClient, type StreamMessage } from "./stream";
import { nextTickDirection, type TickDirection } from "~/lib/tick";
import { INDICATORS, useTradeLayout } from "./trade-layout";
import { TradesPanel } from "./Trades";
import type { MarketQuote } from "./OrderForm";
import "./trade.css";

// The member's trading side (order form, settings, account tabs): loaded
// only once a member is signed in.
const TradingSide = lazy(() => import("./TradingSide"));

export type Area = "spot" | "futures";

// The page's stream; tests put a fake one here.
export const StreamContext = createContext<() => StreamClient>(sharedStream);

const TICKER_POLL_MS = 10_000;
export { INDICATORS } from "./trade-layout";

const MOBILE_PANELS = ["book", "trades", "pairs", "rules"] as const;
type MobilePanel = (typeof MOBILE_PANELS)[number];

type Loaded =
  | { state: "loading" }
  | { state: "error" }
  | { state: "ready"; exchange: Exchange | null; instruments: Instrument[]; tickers: Ticker[] };

export function TradeScreen({ area, exchange, symbol }: { area: Area; exchange: string; symbol?: string }) {
  const { t } = useLingui();
  const navigate = useNavigate();
  const marketType: MarketType = area === "spot" ? "SPOT" : "SWAP";
  const title = area === "spot" ? t`Spot trading` : t`Futures trading`;
  const [data, setData] = useState<Loaded>({ state: "loading" });
  const [attempt, setAttempt] = useState(0);
  const [mobilePanel, setMobilePanel] = useState<MobilePanel>("book");
  const tickerMap = useMemo(
    () => new Map(data.state === "ready" ? data.tickers.map((x) => [x.symbol ?? "", x] as const) : []),
    [data],
  );

  useEffect(() => {
    let alive = true;
    setData({ state: "loading" });
    (async () => {
      const list = await fetchExchanges();
      const ex = list.find((e) => e.slug === exchange) ?? null;
      if (!ex || displayState(ex) !== "available" || !ex.marketTypes.includes(marketType)) {
        return { state: "ready" as const, exchange: ex, instruments: [], tickers: [] };
      }
      const [instruments, tickers] = await Promise.all([
        fetchInstruments(exchange, marketType),
        fetchTickers(exchange, marketType).catch(() => [] as Ticker[]),
      ]);
      return { state: "ready" as const, exchange: ex, instruments, tickers };
    })().then(
      (d) => alive && setData(d),
      () => alive && setData({ state: "error" }),
    );
    return () => {
      alive = false;
    };
  }, [exchange, marketType, attempt]);

  // Without a symbol, open the exchange's default market.
  useEffect(() => {
    if (data.state !== "ready" || symbol) return;
    const s = defaultSymbol(data.instruments);
    if (s) navigate(`/${area}/${exchange}/${s}`, { replace: true });
  }, [data, symbol, area, exchange, navigate]);

  if (data.state === "loading") {
    return (
      <div className="page trade-page">
        <PageTitle page={title} />
        <p className="trade-empty" aria-busy="true">
          <Trans>Loading market…</Trans>
        </p>
      </div>
    );
  }
  if (data.state === "error") {
    return (
      <div className="page trade-page">
        <PageTitle page={title} />
        <NetworkAnomaly onRetry={() => setAttempt((n) => n + 1)} />
      </div>
    );
  }
  const ex = data.exchange;
  if (!ex || displayState(ex) !== "available" || !ex.marketTypes.includes(marketType)) {
    const name = ex?.name ?? exchange;
    const st = ex ? displayState(ex) : "unavailable";
    return (
      <div className="page trade-page">
        <PageTitle page={title} />
        <h1>{title}</h1>
        <p className="notice" data-testid="market-unavailable">
          {!ex
            ? t`There is no exchange called ${name}.`
            : st === "coming_soon"
              ? t`${name} is coming soon.`
              : !ex.marketTypes.includes(marketType)
                ? t`${name} does not offer this market.`
                : t`${name} is unavailable right now. Please try again later.`}
        </p>
        <p>
          <Link to="/" className="button">
            <Trans>Back to home</Trans>
          </Link>
        </p>
      </div>
    );
  }
  const instrument = symbol ? data.instruments.find((i) => i.symbol === symbol) : undefined;
  const panelLabel: Record<MobilePanel, string> = { book: t`Order book`, trades: t`Last trades`, pairs: t`Pairs`, rules: t`Trading rules` };
  return (
    <div className="trade-page trade-grid" data-testid="trade-screen">
      <PageTitle page={symbol ? `${symbol} ${title}` : title} />
      {/* On a phone the panels under the chart are shown one at a time. */}
      <div className="trade-mobile-tabs" role="group" aria-label={t`Panels`} data-testid="mobile-tabs">
        {MOBILE_PANELS.map((k) => (
          <button key={k} type="button" aria-pressed={mobilePanel === k} onClick={() => setMobilePanel(k)} data-panel={k}>
            {panelLabel[k]}
          </button>
        ))}
      </div>
      <div className="trade-pairs-area" data-mobile-hidden={mobilePanel !== "pairs" || undefined}>
        <PairList
          area={area}
          exchange={exchange}
          marketType={marketType}
          current={symbol ?? ""}
          instruments={data.instruments}
          tickers={tickerMap}
        />
      </div>
      {symbol && instrument ? (
        <Market
          key={`${exchange}:${marketType}:${symbol}`}
          area={area}
          ex={ex}
          marketType={marketType}
          instrument={instrument}
          initialTicker={data.tickers.find((x) => x.symbol === symbol) ?? null}
          onTickers={(list) => setData({ ...data, tickers: list })}
          mobilePanel={mobilePanel}
        />
      ) : (
        <div className="trade-main">
          <p className="notice" data-testid="unknown-pair">
            {symbol ? t`${exchange} has no pair ${symbol}.` : t`Loading market…`}
          </p>
        </div>
      )}
    </div>
  );
}

function NetworkAnomaly({ onRetry }: { onRetry: () => void }) {
  return (
    <div className="notice notice-error" role="alert">
      <p>
        <Trans>Network anomaly</Trans>
      </p>
      <button type="button" className="button" onClick={onRetry}>
        <Trans>Refresh</Trans>
      </button>
    </div>
  );
}

type MarketProps = {
  area: Area;
  ex: Exchange;
  marketType: MarketType;
  instrument: Instrument;
  initialTicker: Ticker | null;
  onTickers: (list: Ticker[]) => void;
  mobilePanel: MobilePanel;
};

function Market({ area, ex, marketType, instrument, initialTicker, onTickers, mobilePanel }: MarketProps) {
  const { t } = useLingui();
  const stream = useContext(StreamContext)();
  const futures = area === "futures";
  const symbol = instrument.symbol;
  const [ticker, setTicker] = useState<Partial<Ticker> | null>(initialTicker);
  const [direction, setDirection] = useState<TickDirection>("flat");
  const latest = useRef<{ ticker: Partial<Ticker> | null; prevLast?: string; dir: TickDirection }>({
    ticker: initialTicker,
    prevLast: initialTicker?.last,
    dir: "flat",
  });
  const flush = useFrameScheduler(() => {
    setTicker(latest.current.ticker);
    setDirection(latest.current.dir);
  });
  const [conn, setConn] = useState<ConnectionState>(stream.connectionState);
  const wasOpen = useRef(false);

  useEffect(() => {
    const off = stream.subscribe({ channel: "ticker", exchange: ex.slug, marketType, symbol }, (m: StreamMessage) => {
      if (m.type !== "ticker" || !m.ticker) return;
      const tk = m.ticker as Partial<Ticker>;
      const l = latest.current;
      if (tk.last) {
        l.dir = nextTickDirection(l.prevLast, tk.last, l.dir);
        l.prevLast = tk.last;
      }
      l.ticker = { ...l.ticker, ...tk };
      flush();
    });
    const offState = stream.onState((s) => {
      if (s === "open") wasOpen.current = true;
      setConn(s);
    });
    return () => {
      off();
      offState();
    };
  }, [stream, ex.slug, marketType, symbol, flush]);

  // The pair list's prices: polled while the page is visible.
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | null = null;
    const poll = () =>
      fetchTickers(ex.slug, marketType).then((list) => {
        onTickers(list);
        // The stream's ticker may lack the slower fields (funding, mark, index):
        // the polled ones fill them in, never the last price.
        const x = list.find((k) => k.symbol === symbol);
        if (!x) return;
        const l = latest.current;
        const extra: Partial<Ticker> = {};
        if (x.fundingRate) extra.fundingRate = x.fundingRate;
        if (x.nextFundingTime) extra.nextFundingTime = x.nextFundingTime;
        if (x.markPrice && !l.ticker?.markPrice) extra.markPrice = x.markPrice;
        if (x.indexPrice && !l.ticker?.indexPrice) extra.indexPrice = x.indexPrice;
        if (Object.keys(extra).length === 0) return;
        l.ticker = { ...l.ticker, ...extra };
        flush();
      }, () => undefined);
    const start = () => {
      if (timer === null && !document.hidden) timer = setInterval(poll, TICKER_POLL_MS);
    };
    const stop = () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
    };
    const onVis = () => (document.hidden ? stop() : start());
    start();
    document.addEventListener("visibilitychange", onVis);
    return () => {
      stop();
      document.removeEventListener("visibilitychange", onVis);
    };
    // onTickers changes with every poll; the timer must not restart for it.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ex.slug, marketType, symbol]);

  // The chart layout: this browser's, or the member's saved one (trade-layout.ts).
  const [layout, changeLayout] = useTradeLayout();
  const resolutions = useMemo(() => availableResolutions(ex.capabilities.intervals), [ex.capabilities.intervals]);
  const resolution = pickResolution(resolutions, layout.interval);
  const chartType = layout.chartType;
  const indicators = layout.indicators;

  // Ready = chart drawn with its first page and the book filled.
  const [chartReady, setChartReady] = useState(false);
  const [bookReady, setBookReady] = useState(false);
  const ready = chartReady && bookReady;
  useEffect(() => {
    if (ready && typeof performance !== "undefined" && performance.mark) performance.mark("exhub:trade-ready");
  }, [ready]);
  const onChartReady = useCallback(() => setChartReady(true), []);
  const onBookFilled = useCallback(() => setBookReady(true), []);

  const chartTypeLabel: Record<ChartTypeId, string> = {
    Bars: t`Bars`,
    Candles: t`Candles`,
    HollowCandles: t`Hollow candles`,
    Columns: t`Columns`,
    Line: t`Line`,
    LineWithMarkers: t`Line with markers`,
    StepLine: t`Step line`,
    Area: t`Area`,
    HLCArea: t`HLC area`,
    Baseline: t`Baseline`,
    HighLow: t`High-low`,
    HeikinAshi: t`Heikin Ashi`,
  };
  const fixToCoin = futures && ex.key === 2;
  const me = useMe();
  const quote: MarketQuote = { bid: ticker?.bid, ask: ticker?.ask, last: ticker?.last, mark: ticker?.markPrice };
  const readQuote = useCallback((): MarketQuote => {
    const tk = latest.current.ticker;
    return { bid: tk?.bid, ask: tk?.ask, last: tk?.last, mark: tk?.markPrice };
  }, []);

  return (
    <>
      <div className="trade-main" data-ready={ready ? "true" : undefined}>
        {conn === "closed" && wasOpen.current && (
          <div className="notice notice-error" role="alert">
            <p>
              <Trans>Network anomaly</Trans>
            </p>
            <button type="button" className="button" onClick={() => window.location.reload()}>
              <Trans>Refresh</Trans>
            </button>
          </div>
        )}
        <MarketHeader
          symbol={symbol}
          base={instrument.base}
          quote={instrument.quote}
          futures={futures}
          ticker={ticker}
          direction={direction}
          tickSize={instrument.tickSize}
        />
        <section className="trade-panel trade-chart-panel" aria-label={t`Chart`}>
          <div className="chart-toolbar">
            <div role="group" aria-label={t`Resolution`} className="chart-intervals" data-testid="resolutions">
              {resolutions.map((r) => (
                <button key={r.code} type="button" aria-pressed={r.code === resolution?.code} onClick={() => changeLayout({ interval: r.code })}>
                  {r.label}
                </button>
              ))}
            </div>
            <label className="trade-select">
              <span className="visually-hidden">{t`Chart type`}</span>
              <select
                value={String(CHART_TYPES[chartType])}
                onChange={(e) => changeLayout({ chartType: parseChartType(e.target.value) ?? "Candles" })}
                data-testid="chart-type"
              >
                {CHART_TYPE_IDS.map((c) => (
                  <option key={c} value={String(CHART_TYPES[c])} data-type={c}>
                    {chartTypeLabel[c]}
                  </option>
                ))}
              </select>
            </label>
            <div role="group" aria-label={t`Indicators`} className="chart-indicators">
              {INDICATORS.map((name) => (
                <button
                  key={name}
                  type="button"
                  aria-pressed={indicators.includes(name)}
                  onClick={() => changeLayout({ indicators: indicators.includes(name) ? indicators.filter((x) => x !== name) : [...indicators, name] })}
                >
                  {name}
                </button>
              ))}
            </div>
          </div>
          {resolution ? (
            <Chart
              stream={stream}
              exchange={ex.slug}
              marketType={marketType}
              symbol={symbol}
              resolution={resolution}
              chartType={chartType}
              chartTypeLabel={chartTypeLabel[chartType]}
              indicators={indicators}
              tickSize={instrument.tickSize}
              stepSize={instrument.stepSize}
              pageLimit={ex.capabilities.pageLimits.candles}
              onReady={onChartReady}
            />
          ) : (
            <p className="trade-empty">{t`This exchange offers no chart data.`}</p>
          )}
        </section>
      </div>
      <div className="trade-side">
        <div className="trade-side-part" data-mobile-hidden={mobilePanel !== "book" || undefined}>
          <OrderBookPanel
            stream={stream}
            exchange={ex.slug}
            marketType={marketType}
            symbol={symbol}
            tickSize={instrument.tickSize}
            stepSize={instrument.stepSize}
            base={instrument.base}
            quote={instrument.quote}
            last={ticker?.last}
            lastDirection={direction}
            onFilled={onBookFilled}
          />
        </div>
        <div className="trade-side-part" data-mobile-hidden={mobilePanel !== "trades" || undefined}>
          <TradesPanel
            stream={stream}
            exchange={ex.slug}
            marketType={marketType}
            symbol={symbol}
            tickSize={instrument.tickSize}
            stepSize={instrument.stepSize}
            base={instrument.base}
            quote={instrument.quote}
          />
        </div>
      </div>
      <aside className="trade-right" data-mobile-hidden={mobilePanel !== "rules" || undefined}>
        <RulesPanel instrument={instrument} futures={futures} fixToCoin={fixToCoin} />
      </aside>
      {me.status === "member" ? (
        <Suspense fallback={<OrderPanelShell busy />}>
          <TradingSide ex={ex} marketType={marketType} instrument={instrument} quote={quote} readQuote={readQuote} stream={stream} />
        </Suspense>
      ) : (
        <OrderPanelShell busy={me.status === "loading" || me.status === "unknown"} secondFactor={me.status === "aal2_required"} />
      )}
    </>
  );
}

// The order panel without a member: Log In / Sign Up in place of the form
// (or a placeholder while the session is being read).
function OrderPanelShell({ busy, secondFactor }: { busy: boolean; secondFactor?: boolean }) {
  const { t } = useLingui();
  const here = useLocation();
  return (
    <section className="trade-panel trade-order" aria-labelledby="order-heading" data-testid="order-panel">
      <header className="trade-panel-head">
        <h2 id="order-heading">{t`Place order`}</h2>
      </header>
      {busy ? (
        <p className="trade-empty" aria-busy="true">
          {t`Loading your account…`}
        </p>
      ) : secondFactor ? (
        <div className="order-signed-out" data-testid="order-second-factor">
          <p>{t`Enter the code of your second factor to trade.`}</p>
          <p className="order-signed-out-actions">
            <Link to={`/otpauth?return_to=${encodeURIComponent(`${here.pathname}${here.search}`)}`} className="button button--primary">
              {t`Continue`}
            </Link>
          </p>
        </div>
      ) : (
        <div className="order-signed-out" data-testid="order-signed-out">
          <p>{t`Log in or sign up to trade.`}</p>
          <p className="order-signed-out-actions">
            <Link to={loginPath(`${here.pathname}${here.search}`)} className="button button--primary">
              {t`Log In`}
            </Link>
            <Link to="/regist" className="button">
              {t`Sign Up`}
            </Link>
          </p>
        </div>
      )}
    </section>
  );
}
