import { useLingui } from "@lingui/react/macro";
import {
  useEffect,
  useId,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type PointerEvent,
} from "react";
import { areaPath, extent, indexAt, keyTarget, labelIndices, linePath, niceTicks, scale, slotX } from "./chart-math";

export type ChartSeries = {
  key: string;
  label: string;
  kind: "line" | "area" | "bar";
  axis: "left" | "right";
  // A CSS colour (theme variables: var(--up) ...).
  color: string;
  // For pixel positions only; null where the series has no value.
  values: (number | null)[];
  // Columns coloured by their value (funding: positive green, negative red).
  colorOf?: (v: number) => string;
};

export type TooltipRow = { key: string; label: string; value: string; color: string };

export type ChartProps = {
  label: string;
  times: readonly number[];
  series: readonly ChartSeries[];
  axisLabel: { left: (n: number) => string; right?: (n: number) => string; time: (ms: number) => string };
  // Time and values of point i, formatted from the API's decimal strings.
  tooltip: (i: number) => { time: string; rows: TooltipRow[] };
  height?: number;
  testId?: string;
  // overlay: every column series spans the whole slot (series that never
  // overlap, such as buys above zero and sells below); grouped: side by side.
  barLayout?: "grouped" | "overlay";
};

const FALLBACK_WIDTH = 640;

function useWidth(ref: React.RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(FALLBACK_WIDTH);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => {
      const w = el.clientWidth;
      if (w > 0) setWidth(w);
    };
    measure();
    if (typeof ResizeObserver === "undefined") return;
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
  return width;
}

// A time-series chart drawn as SVG: lines, areas and grouped columns on a
// left and an optional right axis, with a tooltip that follows the pointer
// and the keyboard (arrow keys, Page Up/Down, Home, End on the focused chart).
export function Chart({
  label,
  times,
  series,
  axisLabel,
  tooltip,
  height = 240,
  testId,
  barLayout = "grouped",
}: ChartProps) {
  const { t } = useLingui();
  const box = useRef<HTMLDivElement>(null);
  const width = useWidth(box);
  const [active, setActive] = useState<number | null>(null);
  const tipId = useId();
  const n = times.length;

  useEffect(() => {
    setActive((a) => (a === null ? null : Math.min(a, n - 1) < 0 ? null : Math.min(a, n - 1)));
  }, [n]);

  const narrow = width < 480;
  const hasRight = series.some((s) => s.axis === "right");
  const m = { top: 10, bottom: 24, left: narrow ? 44 : 60, right: hasRight ? (narrow ? 44 : 60) : 12 };
  const plot = { left: m.left, right: Math.max(m.left + 10, width - m.right), top: m.top, bottom: height - m.bottom };

  const geo = useMemo(() => {
    const axis = (side: "left" | "right") => {
      const ss = series.filter((s) => s.axis === side);
      if (ss.length === 0) return null;
      const bars = ss.some((s) => s.kind === "bar");
      const e = extent(
        ss.map((s) => s.values),
        bars,
      );
      if (!e) return null;
      const { ticks, domain } = niceTicks(e, narrow ? 3 : 4);
      return { ticks, y: scale(domain, [plot.bottom, plot.top]) };
    };
    const left = axis("left");
    const right = axis("right");
    const xs = times.map((_, i) => slotX(i, n, plot.left, plot.right));
    return { left, right, xs };
  }, [series, times, n, plot.left, plot.right, plot.top, plot.bottom, narrow]);

  const bars = series.filter((s) => s.kind === "bar");
  const slot = (plot.right - plot.left) / Math.max(1, n);
  const groups = barLayout === "overlay" ? 1 : Math.max(1, bars.length);
  const barW = Math.max(0.5, (slot * 0.8) / groups);

  const onPointer = (e: PointerEvent<SVGSVGElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    const x = ((e.clientX - r.left) / (r.width || width)) * width;
    setActive(indexAt(x, n, plot.left, plot.right));
  };
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const next = keyTarget(e.key, active, n);
    if (next === null) {
      if (e.key === "Escape") setActive(null);
      return;
    }
    e.preventDefault();
    setActive(next);
  };

  const tip = active !== null && active < n ? tooltip(active) : null;
  const ax = active !== null ? geo.xs[active] : undefined;
  // The tooltip sits beside the crosshair, on the side with more room, and
  // never past the chart's edges.
  const tipRef = useRef<HTMLDivElement>(null);
  const [tipW, setTipW] = useState(180);
  useLayoutEffect(() => {
    const w = tipRef.current?.offsetWidth;
    if (w && w !== tipW) setTipW(w);
  });
  const tipLeft = ax === undefined ? 0 : Math.max(0, Math.min(width - tipW, ax > width / 2 ? ax - 12 - tipW : ax + 12));

  return (
    <div
      ref={box}
      className="md-chart"
      data-testid={testId}
      data-points={n}
      data-active={active ?? ""}
      tabIndex={0}
      role="group"
      aria-roledescription={t`chart`}
      aria-label={t`${label}. Use the arrow keys to move between points.`}
      aria-describedby={tip ? tipId : undefined}
      onKeyDown={onKey}
      onBlur={() => setActive(null)}
    >
      <svg
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        aria-hidden="true"
        onPointerMove={onPointer}
        onPointerDown={onPointer}
        onPointerLeave={() => {
          if (box.current !== document.activeElement) setActive(null);
        }}
      >
        {geo.left?.ticks.map((v) => (
          <g key={`l${v}`} className="md-grid">
            <line x1={plot.left} x2={plot.right} y1={geo.left!.y(v)} y2={geo.left!.y(v)} />
            <text
              x={plot.left - 6}
              y={geo.left!.y(v)}
              textAnchor="end"
              dominantBaseline="middle"
              className="md-axis-text"
            >
              {axisLabel.left(v)}
            </text>
          </g>
        ))}
        {geo.right?.ticks.map((v) => (
          <text key={`r${v}`} x={plot.right + 6} y={geo.right!.y(v)} dominantBaseline="middle" className="md-axis-text">
            {(axisLabel.right ?? axisLabel.left)(v)}
          </text>
        ))}
        {labelIndices(n, Math.max(2, Math.floor((plot.right - plot.left) / (narrow ? 70 : 110)))).map((i) => (
          <text
            key={`x${i}`}
            x={geo.xs[i]}
            y={height - 6}
            // Labels near an edge are anchored inside the chart.
            textAnchor={geo.xs[i]! > width - 60 ? "end" : geo.xs[i]! < 60 ? "start" : "middle"}
            className="md-axis-text"
          >
            {axisLabel.time(times[i]!)}
          </text>
        ))}
        {bars.map((s, bi) => {
          const y = (s.axis === "left" ? geo.left : geo.right)?.y;
          if (!y) return null;
          const zero = y(0);
          return (
            <g key={s.key} data-series={s.key}>
              {s.values.map((v, i) => {
                if (v === null) return null;
                const x = geo.xs[i]! - (barW * groups) / 2 + (groups === 1 ? 0 : bi) * barW;
                const yv = y(v);
                return (
                  <rect
                    key={i}
                    x={x}
                    width={barW}
                    y={Math.min(yv, zero)}
                    height={Math.max(0.5, Math.abs(zero - yv))}
                    style={{ fill: s.colorOf ? s.colorOf(v) : s.color }}
                    opacity={active === null || active === i ? 0.9 : 0.6}
                  />
                );
              })}
            </g>
          );
        })}
        {series
          .filter((s) => s.kind !== "bar")
          .map((s) => {
            const y = (s.axis === "left" ? geo.left : geo.right)?.y;
            if (!y) return null;
            const ys = s.values.map((v) => (v === null ? null : y(v)));
            return (
              <g key={s.key} data-series={s.key}>
                {s.kind === "area" ? (
                  <path d={areaPath(geo.xs, ys, plot.bottom)} style={{ fill: s.color }} opacity={0.15} />
                ) : null}
                <path d={linePath(geo.xs, ys)} fill="none" style={{ stroke: s.color }} strokeWidth={1.5} />
              </g>
            );
          })}
        {ax !== undefined ? (
          <g className="md-crosshair">
            <line x1={ax} x2={ax} y1={plot.top} y2={plot.bottom} />
            {series
              .filter((s) => s.kind !== "bar")
              .map((s) => {
                const v = s.values[active!];
                const y = (s.axis === "left" ? geo.left : geo.right)?.y;
                return v === null || v === undefined || !y ? null : (
                  <circle key={s.key} cx={ax} cy={y(v)} r={3.5} style={{ fill: s.color }} />
                );
              })}
          </g>
        ) : null}
      </svg>
      {tip ? (
        <div
          id={tipId}
          ref={tipRef}
          className="md-tooltip"
          style={{ left: tipLeft }}
          role="status"
          aria-live="polite"
          data-testid="tooltip"
        >
          <div className="md-tooltip-time">{tip.time}</div>
          <dl>
            {tip.rows.map((r) => (
              <div key={r.key} data-key={r.key}>
                <dt>
                  <span className="md-swatch" style={{ background: r.color }} aria-hidden="true" />
                  {r.label}
                </dt>
                <dd>{r.value}</dd>
              </div>
            ))}
          </dl>
        </div>
      ) : null}
    </div>
  );
}

export function Legend({ items }: { items: { key: string; label: string; color: string; kind?: "line" | "bar" }[] }) {
  return (
    <ul className="md-legend">
      {items.map((i) => (
        <li key={i.key}>
          <span
            className={`md-swatch${i.kind === "line" ? " md-swatch--line" : ""}`}
            style={{ background: i.color }}
            aria-hidden="true"
          />
          {i.label}
        </li>
      ))}
    </ul>
  );
}
