import { Trans, useLingui } from "@lingui/react/macro";
import { useMemo } from "react";
import type {
  FundingPoint,
  HistoryCandle,
  LongShortKind,
  LongShortPoint,
  OpenInterestPoint,
  TakerVolumePoint,
  Ticker,
} from "./api";
import { Chart, Legend, type ChartSeries, type TooltipRow } from "./Chart";
import { column, divideDecimals, hasColumn, isNegative, joinByTime, type Period, type Row } from "./data";
import { DataTable, type TableColumn } from "./DataTable";
import {
  formatAxisNumber,
  formatAxisPercent,
  formatAxisTime,
  formatDecimal,
  formatPercent,
  formatTime,
  MISSING,
} from "./format";
import { Panel, type Load } from "./Panel";

export type Market = { base: string; quote: string; period: Period; locale: string };

const C = {
  oi: "var(--md-oi)",
  volume: "var(--md-volume)",
  up: "var(--up)",
  down: "var(--down)",
  ratio: "var(--md-ratio)",
  kinds: { accounts: "var(--md-c1)", top_accounts: "var(--md-c2)", top_positions: "var(--md-c3)" } as Record<
    LongShortKind,
    string
  >,
};

function withUnit(v: string, unit: string): string {
  return v === MISSING ? v : `${v} ${unit}`;
}

function useTimeFormat(m: Market) {
  return useMemo(
    () => ({
      full: (ms: number) => formatTime(ms, m.locale, m.period),
      axis: (ms: number) => formatAxisTime(ms, m.locale, m.period),
    }),
    [m.locale, m.period],
  );
}

// Open interest (value in quote, area) over the traded volume of each period (columns).
export function OpenInterestPanel({
  m,
  load,
  onRetry,
}: {
  m: Market;
  load: Load<{ oi: OpenInterestPoint[]; candles: HistoryCandle[] }>;
  onRetry: () => void;
}) {
  const { t } = useLingui();
  const time = useTimeFormat(m);
  const rows = useMemo(
    () =>
      load.state !== "ready"
        ? []
        : joinByTime<{ time: number; a?: string; b?: string }>([
            {
              points: load.data.oi.map((p) => ({ time: p.time, a: p.openInterest, b: p.openInterestValue })),
              columns: { oi: "a", oiValue: "b" },
            },
            {
              points: load.data.candles.map((c) => ({ time: c.openTime, a: c.volume, b: c.quoteVolume })),
              columns: { volume: "a", quoteVolume: "b" },
            },
          ]),
    [load],
  );
  const labels = {
    oi: t`Open interest`,
    oiValue: t`Open interest value`,
    volume: t`Volume`,
    quoteVolume: t`Volume value`,
  };
  const base = (s: string) => withUnit(formatDecimal(s, m.locale, 4), m.base);
  const quote = (s: string) => withUnit(formatDecimal(s, m.locale, 2), m.quote);
  const series: ChartSeries[] = [
    {
      key: "quoteVolume",
      label: labels.quoteVolume,
      kind: "bar",
      axis: "right",
      color: C.volume,
      values: column(rows, "quoteVolume"),
    },
    { key: "oiValue", label: labels.oiValue, kind: "area", axis: "left", color: C.oi, values: column(rows, "oiValue") },
  ];
  const tooltip = (i: number) => {
    const v = rows[i]!.values;
    return {
      time: time.full(rows[i]!.time),
      rows: [
        { key: "oi", label: labels.oi, value: base(v.oi ?? ""), color: C.oi },
        { key: "oiValue", label: labels.oiValue, value: quote(v.oiValue ?? ""), color: C.oi },
        { key: "volume", label: labels.volume, value: base(v.volume ?? ""), color: C.volume },
        { key: "quoteVolume", label: labels.quoteVolume, value: quote(v.quoteVolume ?? ""), color: C.volume },
      ],
    };
  };
  const columns: TableColumn[] = [
    { id: "oi", header: `${labels.oi} (${m.base})`, format: (s) => formatDecimal(s, m.locale, 4) },
    { id: "oiValue", header: `${labels.oiValue} (${m.quote})`, format: (s) => formatDecimal(s, m.locale, 2) },
    { id: "volume", header: `${labels.volume} (${m.base})`, format: (s) => formatDecimal(s, m.locale, 4) },
    { id: "quoteVolume", header: `${labels.quoteVolume} (${m.quote})`, format: (s) => formatDecimal(s, m.locale, 2) },
  ];
  const axis = (n: number) => formatAxisNumber(n, m.locale);
  const title = t`Open interest and volume`;
  return (
    <Panel
      id="open-interest"
      title={title}
      load={load}
      empty={rows.length === 0}
      onRetry={onRetry}
      legend={
        <Legend
          items={[
            { key: "oi", label: `${labels.oiValue} (${m.quote})`, color: C.oi, kind: "line" },
            { key: "v", label: `${labels.quoteVolume} (${m.quote})`, color: C.volume },
          ]}
        />
      }
      chart={() => (
        <Chart
          label={title}
          testId="chart-open-interest"
          times={rows.map((r) => r.time)}
          series={series}
          tooltip={tooltip}
          axisLabel={{ left: axis, right: axis, time: time.axis }}
        />
      )}
      table={() => <DataTable label={title} rows={rows} columns={columns} formatTime={time.full} />}
    />
  );
}

export function useKindLabels(): Record<LongShortKind, string> {
  const { t } = useLingui();
  return {
    accounts: t`All accounts`,
    top_accounts: t`Top traders (accounts)`,
    top_positions: t`Top traders (positions)`,
  };
}

// Long/short ratio of every kind the exchange publishes, one line each.
export function LongShortPanel({
  m,
  load,
  onRetry,
}: {
  m: Market;
  load: Load<{ kind: LongShortKind; points: LongShortPoint[] }[]>;
  onRetry: () => void;
}) {
  const { t } = useLingui();
  const time = useTimeFormat(m);
  const kindLabel = useKindLabels();
  const parts = useMemo(() => (load.state === "ready" ? load.data : []), [load]);
  const rows = useMemo(
    () =>
      joinByTime<LongShortPoint>(
        parts.map((p) => ({
          points: p.points,
          columns: { [p.kind]: "longShortRatio", [`${p.kind}:long`]: "longRatio", [`${p.kind}:short`]: "shortRatio" },
        })),
      ),
    [parts],
  );
  const kinds = parts.map((p) => p.kind).filter((k) => hasColumn(rows, k));
  const ratio = (s: string) => formatDecimal(s, m.locale, 4, 2);
  const pct = (s: string) => formatPercent(s, m.locale, 2, 2);
  const series: ChartSeries[] = kinds.map((k) => ({
    key: k,
    label: kindLabel[k],
    kind: "line",
    axis: "left",
    color: C.kinds[k],
    values: column(rows, k),
  }));
  const tooltip = (i: number) => {
    const v = rows[i]!.values;
    return {
      time: time.full(rows[i]!.time),
      rows: kinds.map<TooltipRow>((k) => {
        const value = ratio(v[k] ?? "");
        const long = pct(v[`${k}:long`] ?? "");
        const short = pct(v[`${k}:short`] ?? "");
        return { key: k, label: kindLabel[k], value: t`${value} (long ${long} / short ${short})`, color: C.kinds[k] };
      }),
    };
  };
  const columns: TableColumn[] = kinds.flatMap((k) => {
    const kind = kindLabel[k];
    return [
      { id: k, header: t`${kind}: ratio`, format: ratio },
      { id: `${k}:long`, header: t`${kind}: long`, format: pct },
      { id: `${k}:short`, header: t`${kind}: short`, format: pct },
    ];
  });
  const title = t`Long/short ratio`;
  return (
    <Panel
      id="long-short"
      title={title}
      load={load}
      empty={kinds.length === 0}
      onRetry={onRetry}
      legend={
        <Legend items={kinds.map((k) => ({ key: k, label: kindLabel[k], color: C.kinds[k], kind: "line" as const }))} />
      }
      chart={() => (
        <Chart
          label={title}
          testId="chart-long-short"
          times={rows.map((r) => r.time)}
          series={series}
          tooltip={tooltip}
          axisLabel={{ left: (n) => formatAxisNumber(n, m.locale), time: time.axis }}
        />
      )}
      table={() => <DataTable label={title} rows={rows} columns={columns} formatTime={time.full} />}
    />
  );
}

// Taker buy and sell volume (columns) and their ratio (line, right axis).
// The ratio is computed here exactly from the two volumes.
export function TakerVolumePanel({
  m,
  load,
  onRetry,
}: {
  m: Market;
  load: Load<TakerVolumePoint[]>;
  onRetry: () => void;
}) {
  const { t } = useLingui();
  const time = useTimeFormat(m);
  const rows = useMemo(
    () =>
      load.state !== "ready"
        ? []
        : joinByTime<{ time: number; buy: string; sell: string; ratio: string }>([
            {
              points: load.data.map((p) => ({
                time: p.time,
                buy: p.buyVolume,
                sell: p.sellVolume,
                ratio: divideDecimals(p.buyVolume, p.sellVolume, 4),
              })),
              columns: { buy: "buy", sell: "sell", ratio: "ratio" },
            },
          ]),
    [load],
  );
  const labels = { buy: t`Taker buy volume`, sell: t`Taker sell volume`, ratio: t`Buy/sell ratio` };
  const base = (s: string) => formatDecimal(s, m.locale, 4);
  const ratio = (s: string) => formatDecimal(s, m.locale, 4, 2);
  const series: ChartSeries[] = [
    { key: "buy", label: labels.buy, kind: "bar", axis: "left", color: C.up, values: column(rows, "buy") },
    // Sells below zero, so that dense columns stay readable.
    {
      key: "sell",
      label: labels.sell,
      kind: "bar",
      axis: "left",
      color: C.down,
      values: column(rows, "sell").map((v) => (v === null ? null : -v)),
    },
    { key: "ratio", label: labels.ratio, kind: "line", axis: "right", color: C.ratio, values: column(rows, "ratio") },
  ];
  const tooltip = (i: number) => {
    const v = rows[i]!.values;
    return {
      time: time.full(rows[i]!.time),
      rows: [
        { key: "buy", label: labels.buy, value: withUnit(base(v.buy ?? ""), m.base), color: C.up },
        { key: "sell", label: labels.sell, value: withUnit(base(v.sell ?? ""), m.base), color: C.down },
        { key: "ratio", label: labels.ratio, value: ratio(v.ratio ?? ""), color: C.ratio },
      ],
    };
  };
  const columns: TableColumn[] = [
    { id: "buy", header: `${labels.buy} (${m.base})`, format: base },
    { id: "sell", header: `${labels.sell} (${m.base})`, format: base },
    { id: "ratio", header: labels.ratio, format: ratio },
  ];
  const title = t`Taker buy/sell volume`;
  return (
    <Panel
      id="taker-volume"
      title={title}
      load={load}
      empty={rows.length === 0}
      onRetry={onRetry}
      legend={
        <Legend
          items={[
            { key: "buy", label: `${labels.buy} (${m.base})`, color: C.up },
            { key: "sell", label: `${labels.sell} (${m.base})`, color: C.down },
            { key: "ratio", label: labels.ratio, color: C.ratio, kind: "line" },
          ]}
        />
      }
      chart={() => (
        <Chart
          label={title}
          testId="chart-taker-volume"
          times={rows.map((r) => r.time)}
          series={series}
          tooltip={tooltip}
          barLayout="overlay"
          axisLabel={{
            left: (n) => formatAxisNumber(Math.abs(n), m.locale),
            right: (n) => formatAxisNumber(n, m.locale),
            time: time.axis,
          }}
        />
      )}
      table={() => <DataTable label={title} rows={rows} columns={columns} formatTime={time.full} />}
    />
  );
}

// Settled funding per period (columns: positive green, negative red), and
// the predicted rate of the next settlement when the exchange gives one.
export function FundingPanel({
  m,
  load,
  onRetry,
  ticker,
}: {
  m: Market;
  load: Load<FundingPoint[]>;
  onRetry: () => void;
  ticker: Ticker | null;
}) {
  const { t } = useLingui();
  const time = useTimeFormat(m);
  const rows = useMemo(
    () =>
      load.state !== "ready"
        ? []
        : joinByTime<FundingPoint>([
            { points: load.data, columns: { rate: "rate", settlements: "settlements", markPrice: "markPrice" } },
          ]),
    [load],
  );
  const labels = { rate: t`Funding rate`, settlements: t`Settlements`, markPrice: t`Mark price` };
  const pct = (s: string) => formatPercent(s, m.locale);
  const withMark = hasColumn(rows, "markPrice");
  const series: ChartSeries[] = [
    {
      key: "rate",
      label: labels.rate,
      kind: "bar",
      axis: "left",
      color: C.up,
      values: column(rows, "rate"),
      colorOf: (v) => (v < 0 ? C.down : C.up),
    },
  ];
  const tooltip = (i: number) => {
    const v = rows[i]!.values;
    const out: TooltipRow[] = [
      { key: "rate", label: labels.rate, value: pct(v.rate ?? ""), color: isNegative(v.rate) ? C.down : C.up },
      {
        key: "settlements",
        label: labels.settlements,
        value: formatDecimal(v.settlements, m.locale, 0),
        color: "transparent",
      },
    ];
    if (withMark)
      out.push({
        key: "markPrice",
        label: labels.markPrice,
        value: withUnit(formatDecimal(v.markPrice, m.locale, 8), m.quote),
        color: "transparent",
      });
    return { time: time.full(rows[i]!.time), rows: out };
  };
  const columns: TableColumn[] = [
    { id: "rate", header: labels.rate, format: pct },
    { id: "settlements", header: labels.settlements, format: (s) => formatDecimal(s, m.locale, 0) },
    ...(withMark
      ? [
          {
            id: "markPrice",
            header: `${labels.markPrice} (${m.quote})`,
            format: (s: string) => formatDecimal(s, m.locale, 8),
          },
        ]
      : []),
  ];
  const predicted = ticker?.fundingRate ?? "";
  const next = ticker?.nextFundingTime ?? 0;
  const note =
    predicted !== "" || next > 0 ? (
      <dl className="md-next" data-testid="next-funding">
        {predicted !== "" ? (
          <div>
            <dt>
              <Trans>Predicted rate</Trans>
            </dt>
            <dd className={isNegative(predicted) ? "down" : "up"}>{pct(predicted)}</dd>
          </div>
        ) : null}
        {next > 0 ? (
          <div>
            <dt>
              <Trans>Next funding</Trans>
            </dt>
            <dd>{formatTime(next, m.locale, "1h")}</dd>
          </div>
        ) : null}
      </dl>
    ) : null;
  const title = t`Funding rate`;
  return (
    <Panel
      id="funding-rate"
      title={title}
      note={note}
      load={load}
      empty={rows.length === 0}
      onRetry={onRetry}
      legend={
        <Legend
          items={[
            { key: "pos", label: t`Longs pay shorts`, color: C.up },
            { key: "neg", label: t`Shorts pay longs`, color: C.down },
          ]}
        />
      }
      chart={() => (
        <Chart
          label={title}
          testId="chart-funding-rate"
          times={rows.map((r) => r.time)}
          series={series}
          tooltip={tooltip}
          axisLabel={{ left: (n) => formatAxisPercent(n, m.locale), time: time.axis }}
        />
      )}
      table={() => <DataTable label={title} rows={rows} columns={columns} formatTime={time.full} />}
    />
  );
}
