import { useLingui } from "@lingui/react/macro";
import { dispose, init, registerLocale, type CandleType, type Chart as KChart, type KLineData } from "klinecharts";
import { useEffect, useRef, useState } from "react";
import { useTheme } from "~/theme";
import { fetchCandles, type MarketType } from "./api";
import { candlePageSize, toKLine } from "./chart-data";
import { HIDDEN_BARS, registerSeriesIndicator, SERIES_INDICATOR, type SeriesExtend } from "./chart-draw";
import { NATIVE_TYPES, type ChartTypeId } from "./chart-types";
import { stepDecimals } from "~/lib/decimal";
import type { Resolution } from "./intervals";
import type { StreamClient, StreamMessage } from "./stream";

export type { ChartTypeId };

type Props = {
  stream: StreamClient;
  exchange: string;
  marketType: MarketType;
  symbol: string;
  resolution: Resolution;
  chartType: ChartTypeId;
  chartTypeLabel: string;
  indicators: string[];
  tickSize: string;
  stepSize: string;
  pageLimit: number | undefined;
  onReady?: () => void;
};

const MAIN_INDICATORS = new Set(["MA", "EMA", "BOLL"]);

// One chart per mounted component, driven from effects (the library has
// no React binding): symbol and period changes reload through the data
// loader, which pages back with `end` as the user scrolls left and feeds
// the forming candle from the stream.
export function Chart(props: Props) {
  const { t, i18n } = useLingui();
  const { theme } = useTheme();
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<KChart | null>(null);
  const live = useRef(props);
  live.current = props;
  const [error, setError] = useState(false);

  // Create once.
  useEffect(() => {
    if (!el.current) return;
    registerSeriesIndicator();
    const c = init(el.current, { styles: theme });
    if (!c) return;
    chart.current = c;
    let unsubscribe: (() => void) | null = null;
    c.setDataLoader({
      getBars: async ({ type, timestamp, callback }) => {
        const p = live.current;
        const limit = candlePageSize(p.pageLimit);
        if (type !== "init" && type !== "forward") {
          callback([], false);
          return;
        }
        try {
          const end = type === "forward" && timestamp ? timestamp - 1 : undefined;
          const candles = await fetchCandles({
            exchange: p.exchange,
            type: p.marketType,
            symbol: p.symbol,
            interval: p.resolution.code,
            end,
            limit,
          });
          const data = candles.map(toKLine);
          setError(false);
          callback(data, { forward: data.length > 0 && data.length >= Math.min(limit, 100) });
          if (type === "init") live.current.onReady?.();
        } catch {
          setError(true);
          callback([], false);
        }
      },
      subscribeBar: ({ callback }) => {
        const p = live.current;
        unsubscribe?.();
        unsubscribe = p.stream.subscribe(
          {
            channel: "candles",
            exchange: p.exchange,
            marketType: p.marketType,
            symbol: p.symbol,
            interval: p.resolution.code,
          },
          (m: StreamMessage) => {
            if (m.type !== "candle" || !m.candle) return;
            callback(toKLine(m.candle as Parameters<typeof toKLine>[0]) as KLineData);
          },
        );
      },
      unsubscribeBar: () => {
        unsubscribe?.();
        unsubscribe = null;
      },
    });
    return () => {
      unsubscribe?.();
      dispose(c);
      chart.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // Market and resolution.
  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.setSymbol({
      ticker: `${props.exchange}:${props.marketType}:${props.symbol}`,
      pricePrecision: stepDecimals(props.tickSize || "0.01"),
      volumePrecision: stepDecimals(props.stepSize || "0.001"),
    });
    c.setPeriod(props.resolution.period);
  }, [props.exchange, props.marketType, props.symbol, props.resolution, props.tickSize, props.stepSize]);

  // Theme and chart type: native types style the candles; the custom ones
  // hide them and draw the series indicator over them.
  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    c.setStyles(theme);
    const native = NATIVE_TYPES.has(props.chartType);
    const type: CandleType = native
      ? ({ Candles: "candle_solid", HollowCandles: "candle_up_stroke", Bars: "ohlc", Line: "area", Area: "area" }[
          props.chartType as "Candles"
        ] as CandleType)
      : "candle_solid";
    c.setStyles({
      candle: {
        type,
        ...(native ? {} : { bar: HIDDEN_BARS }),
        area:
          props.chartType === "Line"
            ? { lineSize: 2, backgroundColor: [{ offset: 0, color: "rgba(0,0,0,0)" }, { offset: 1, color: "rgba(0,0,0,0)" }] }
            : { lineSize: 2, backgroundColor: [{ offset: 0, color: "rgba(33,150,243,0.01)" }, { offset: 1, color: "rgba(33,150,243,0.2)" }] },
      },
    });
    c.removeIndicator({ name: SERIES_INDICATOR });
    if (!native) {
      const extendData: SeriesExtend = { kind: props.chartType, theme: theme === "light" ? "light" : "dark", label: props.chartTypeLabel };
      c.createIndicator({ name: SERIES_INDICATOR, paneId: "candle_pane", extendData }, true);
    }
    el.current?.setAttribute("data-chart-type", props.chartType);
  }, [props.chartType, props.chartTypeLabel, theme]);

  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    // Every indicator but the chart type's series.
    for (const ind of c.getIndicators()) if (ind.name !== SERIES_INDICATOR) c.removeIndicator({ id: ind.id });
    for (const name of props.indicators) {
      if (MAIN_INDICATORS.has(name)) c.createIndicator({ name, paneId: "candle_pane" }, true);
      else c.createIndicator(name);
    }
  }, [props.indicators]);

  // Chart labels follow the app language.
  useEffect(() => {
    const c = chart.current;
    if (!c) return;
    const key = `exhub-${i18n.locale}`;
    registerLocale(key, {
      time: t`Time: `,
      open: t`Open: `,
      high: t`High: `,
      low: t`Low: `,
      close: t`Close: `,
      volume: t`Volume: `,
      change: t`Change: `,
      turnover: t`Turnover: `,
      second: t`s`,
      minute: t`m`,
      hour: t`h`,
      day: t`D`,
      week: t`W`,
      month: t`M`,
      year: t`Y`,
    });
    c.setLocale(key);
  }, [i18n.locale, t]);

  return (
    <div className="trade-chart-wrap">
      {error && (
        <p className="trade-chart-error" role="status">
          {t`Chart data could not be loaded.`}
        </p>
      )}
      <div ref={el} className="trade-chart" data-testid="chart" />
    </div>
  );
}
