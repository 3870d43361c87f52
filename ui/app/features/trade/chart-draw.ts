import { registerIndicator, type KLineData } from "klinecharts";
import { baselineValue, columnUp, heikinAshi, splitAtBaseline, stepPoints, type ChartTypeId, type OHLC, type Point } from "./chart-types";

// The custom chart types are one indicator on the candle pane that draws the
// series itself; the candles under it are made transparent. Its figures
// (high, low) carry no title: they only give the price axis its range.
export const SERIES_INDICATOR = "EXHUB_SERIES";

export type SeriesExtend = { kind: ChartTypeId; theme: "dark" | "light"; label: string };

// The app's up/down/accent colours per theme (app.css).
const PALETTE = {
  dark: { up: "#2ebd85", down: "#f6465d", line: "#34d3b0" },
  light: { up: "#0b8a5a", down: "#c81e3a", line: "#0d8a70" },
} as const;

// Transparent candles, for the custom types.
const CLEAR = "rgba(0,0,0,0)";
export const HIDDEN_BARS = {
  upColor: CLEAR,
  downColor: CLEAR,
  noChangeColor: CLEAR,
  upBorderColor: CLEAR,
  downBorderColor: CLEAR,
  noChangeBorderColor: CLEAR,
  upWickColor: CLEAR,
  downWickColor: CLEAR,
  noChangeWickColor: CLEAR,
};

export function alpha(hex: string, a: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
}

function polyline(ctx: CanvasRenderingContext2D, pts: readonly Point[]) {
  ctx.beginPath();
  pts.forEach((p, i) => (i === 0 ? ctx.moveTo(p.x, p.y) : ctx.lineTo(p.x, p.y)));
}

// Fills the band between two lines that share their x coordinates.
function band(ctx: CanvasRenderingContext2D, top: readonly Point[], bottom: readonly Point[], color: string) {
  if (top.length < 2) return;
  ctx.beginPath();
  top.forEach((p, i) => (i === 0 ? ctx.moveTo(p.x, p.y) : ctx.lineTo(p.x, p.y)));
  for (let i = bottom.length - 1; i >= 0; i--) ctx.lineTo(bottom[i]!.x, bottom[i]!.y);
  ctx.closePath();
  ctx.fillStyle = color;
  ctx.fill();
}

let registered = false;

export function registerSeriesIndicator() {
  if (registered) return;
  registered = true;
  registerIndicator<OHLC, number, SeriesExtend>({
    name: SERIES_INDICATOR,
    shortName: "",
    series: "price",
    figures: [{ key: "high" }, { key: "low" }],
    calc: (list: KLineData[], ind) => (ind.extendData?.kind === "HeikinAshi" ? heikinAshi(list) : list.map(({ open, high, low, close }) => ({ open, high, low, close }))),
    createTooltipDataSource: ({ indicator }) => ({ name: (indicator.extendData as SeriesExtend | undefined)?.label ?? "", calcParamsText: "", legends: [], features: [] }),
    draw: ({ ctx, chart, indicator, bounding, xAxis, yAxis }) => {
      const ext = indicator.extendData;
      const data = indicator.result;
      if (!ext || data.length === 0) return true;
      const pal = PALETTE[ext.theme] ?? PALETTE.dark;
      const { from, to } = chart.getVisibleRange();
      const bs = chart.getBarSpace();
      const first = Math.max(0, from - 1);
      const last = Math.min(data.length, to + 1);
      const X = (i: number) => xAxis.convertToPixel(i);
      const Y = (v: number) => yAxis.convertToPixel(v);
      const closes: Point[] = [];
      for (let i = first; i < last; i++) closes.push({ x: X(i), y: Y(data[i]!.close) });
      ctx.lineWidth = 1.5;
      ctx.lineJoin = "round";
      switch (ext.kind) {
        case "Columns": {
          const bottom = bounding.height;
          for (let i = first; i < last; i++) {
            const y = Y(data[i]!.close);
            ctx.fillStyle = alpha(columnUp(data, i) ? pal.up : pal.down, 0.75);
            ctx.fillRect(X(i) - bs.halfGapBar, y, Math.max(1, bs.gapBar), bottom - y);
          }
          break;
        }
        case "LineWithMarkers": {
          ctx.strokeStyle = pal.line;
          polyline(ctx, closes);
          ctx.stroke();
          const r = Math.min(3, Math.max(1.5, bs.halfGapBar));
          ctx.fillStyle = pal.line;
          for (const p of closes) {
            ctx.beginPath();
            ctx.arc(p.x, p.y, r, 0, Math.PI * 2);
            ctx.fill();
          }
          break;
        }
        case "StepLine": {
          ctx.strokeStyle = pal.line;
          polyline(
            ctx,
            stepPoints(
              closes.map((p) => ({ x: p.x - bs.halfBar, y: p.y })),
              bs.bar,
            ),
          );
          ctx.stroke();
          break;
        }
        case "HLCArea": {
          const highs: Point[] = [];
          const lows: Point[] = [];
          for (let i = first; i < last; i++) {
            highs.push({ x: X(i), y: Y(data[i]!.high) });
            lows.push({ x: X(i), y: Y(data[i]!.low) });
          }
          band(ctx, highs, closes, alpha(pal.up, 0.18));
          band(ctx, closes, lows, alpha(pal.down, 0.18));
          ctx.lineWidth = 1;
          ctx.strokeStyle = pal.up;
          polyline(ctx, highs);
          ctx.stroke();
          ctx.strokeStyle = pal.down;
          polyline(ctx, lows);
          ctx.stroke();
          ctx.lineWidth = 1.5;
          ctx.strokeStyle = pal.line;
          polyline(ctx, closes);
          ctx.stroke();
          break;
        }
        case "Baseline": {
          const base = baselineValue(data.slice(Math.max(0, from), Math.min(data.length, to)));
          if (base === null) break;
          const baseY = Y(base);
          // Split in value space (up = above), then draw in pixels.
          const values: Point[] = [];
          for (let i = first; i < last; i++) values.push({ x: X(i), y: data[i]!.close });
          for (const seg of splitAtBaseline(values, base)) {
            const pts = seg.points.map((p) => ({ x: p.x, y: Y(p.y) }));
            const color = seg.above ? pal.up : pal.down;
            band(ctx, pts, pts.map((p) => ({ x: p.x, y: baseY })), alpha(color, 0.18));
            ctx.strokeStyle = color;
            polyline(ctx, pts);
            ctx.stroke();
          }
          ctx.setLineDash([4, 4]);
          ctx.lineWidth = 1;
          ctx.strokeStyle = alpha(pal.line, 0.7);
          polyline(ctx, [
            { x: 0, y: baseY },
            { x: bounding.width, y: baseY },
          ]);
          ctx.stroke();
          ctx.setLineDash([]);
          break;
        }
        case "HighLow": {
          for (let i = first; i < last; i++) {
            const d = data[i]!;
            const top = Y(d.high);
            ctx.fillStyle = d.close >= d.open ? pal.up : pal.down;
            ctx.fillRect(X(i) - bs.halfGapBar, top, Math.max(1, bs.gapBar), Math.max(1, Y(d.low) - top));
          }
          break;
        }
        case "HeikinAshi": {
          for (let i = first; i < last; i++) {
            const d = data[i]!;
            const x = X(i);
            const color = d.close >= d.open ? pal.up : pal.down;
            ctx.strokeStyle = color;
            ctx.fillStyle = color;
            ctx.lineWidth = 1;
            ctx.beginPath();
            ctx.moveTo(x, Y(d.high));
            ctx.lineTo(x, Y(d.low));
            ctx.stroke();
            const yo = Y(d.open);
            const yc = Y(d.close);
            ctx.fillRect(x - bs.halfGapBar, Math.min(yo, yc), Math.max(1, bs.gapBar), Math.max(1, Math.abs(yc - yo)));
          }
          break;
        }
        default:
          break;
      }
      return true;
    },
  });
}
