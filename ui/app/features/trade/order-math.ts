import type { Big } from "big.js";
import { dec, decimalString, isDecimal } from "~/lib/decimal";

// The order form's arithmetic, exact on decimal strings (big.js through
// ~/lib/decimal): the instrument's rules, sizes by quote amount and by
// percent of the maximum, and take-profit / stop-loss triggers from the
// spec's three methods (ROI %, change %, profit and loss).

// big.js rounding modes.
const ROUND_DOWN = 0;
const ROUND_HALF_UP = 1;
const ROUND_UP = 3;

export type InstrumentRules = {
  tickSize: string;
  stepSize: string;
  minQty: string;
  maxQty: string;
  minNotional: string;
  minPrice: string;
  maxPrice: string;
  marketStepSize: string;
  marketMinQty: string;
  marketMaxQty: string;
};

function positive(s: string | undefined): s is string {
  return isDecimal(s) && dec(s).gt(0);
}

// v rounded to a multiple of step: "down" toward zero, "up" away from zero,
// "nearest" half up. A step that is not a positive decimal leaves v as is.
export function roundToStep(v: string | Big, step: string, mode: "down" | "up" | "nearest" = "down"): string {
  const x = dec(v);
  if (!positive(step)) return decimalString(x);
  const s = dec(step);
  const rm = mode === "down" ? ROUND_DOWN : mode === "up" ? ROUND_UP : ROUND_HALF_UP;
  return decimalString(x.div(s).round(0, rm).times(s));
}

// Whether v is an exact multiple of step.
export function isOnGrid(v: string, step: string): boolean {
  if (!positive(step)) return true;
  return dec(v).mod(dec(step)).eq(0);
}

export type RuleCode =
  | "price.required"
  | "price.tick"
  | "price.min"
  | "price.max"
  | "qty.required"
  | "qty.step"
  | "qty.min"
  | "qty.max"
  | "notional.min";

export type RuleIssue = { field: "price" | "qty"; code: RuleCode; limit?: string };

// Checks an order against the instrument before it is sent. For a market
// order the market grid and limits apply, and the notional is estimated at
// refPrice (the best opposite price or the last price) when known.
export function checkOrderRules(
  r: InstrumentRules,
  o: { type: "LIMIT" | "MARKET"; price?: string; qty: string; refPrice?: string },
): RuleIssue[] {
  const out: RuleIssue[] = [];
  const market = o.type === "MARKET";
  if (!market) {
    if (!positive(o.price)) out.push({ field: "price", code: "price.required" });
    else {
      if (!isOnGrid(o.price, r.tickSize)) out.push({ field: "price", code: "price.tick", limit: r.tickSize });
      if (positive(r.minPrice) && dec(o.price).lt(dec(r.minPrice))) out.push({ field: "price", code: "price.min", limit: r.minPrice });
      if (positive(r.maxPrice) && dec(o.price).gt(dec(r.maxPrice))) out.push({ field: "price", code: "price.max", limit: r.maxPrice });
    }
  }
  if (!positive(o.qty)) {
    out.push({ field: "qty", code: "qty.required" });
    return out;
  }
  const step = market && positive(r.marketStepSize) ? r.marketStepSize : r.stepSize;
  const min = market && positive(r.marketMinQty) ? r.marketMinQty : r.minQty;
  const max = market && positive(r.marketMaxQty) ? r.marketMaxQty : r.maxQty;
  const q = dec(o.qty);
  if (!isOnGrid(o.qty, step)) out.push({ field: "qty", code: "qty.step", limit: step });
  if (positive(min) && q.lt(dec(min))) out.push({ field: "qty", code: "qty.min", limit: min });
  if (positive(max) && q.gt(dec(max))) out.push({ field: "qty", code: "qty.max", limit: max });
  const at = market ? o.refPrice : o.price;
  if (positive(r.minNotional) && positive(at) && q.times(dec(at)).lt(dec(r.minNotional))) {
    out.push({ field: "qty", code: "notional.min", limit: r.minNotional });
  }
  return out;
}

// The base quantity bought with a quote amount at a price, cut to the step
// (never more than the amount pays for). Null without a usable price.
export function qtyFromQuote(amount: string, price: string | undefined, step: string): string | null {
  if (!isDecimal(amount) || !positive(price)) return null;
  const a = dec(amount);
  if (a.lte(0)) return "0";
  return roundToStep(a.div(dec(price)), step, "down");
}

// percent (0..100) of the largest order size, cut to the step.
export function qtyFromPercent(percent: string, max: string | undefined, step: string): string | null {
  if (!isDecimal(percent) || !isDecimal(max)) return null;
  const p = dec(percent);
  if (p.lte(0) || dec(max).lte(0)) return "0";
  const f = p.gt(100) ? dec("100") : p;
  return roundToStep(dec(max).times(f).div(100), step, "down");
}

export type TpSlKind = "tp" | "sl";
export type TpSlMethod = "price" | "roi" | "change" | "pnl";

// The trigger price of a take-profit or stop-loss of an entry on `side`
// (BUY opens or adds long, SELL short) at `entry`:
//   price   the value is the trigger price itself
//   change  the price moves value % from the entry, in the trade's favour
//           for a take-profit and against it for a stop-loss
//   roi     the return on margin is value %: the price moves value/leverage %
//   pnl     the profit (or the loss, for a stop-loss) is value in the quote
//           asset on qty: the price moves value/qty
// Values are magnitudes (a sign is ignored). The result is rounded to the
// tick (half up). Null when an input is missing or not usable.
export function tpslTrigger(a: {
  kind: TpSlKind;
  method: TpSlMethod;
  value: string;
  side: "BUY" | "SELL";
  entry: string | undefined;
  leverage?: string;
  qty?: string;
  tickSize: string;
}): string | null {
  if (!isDecimal(a.value)) return null;
  if (a.method === "price") return positive(a.value) ? roundToStep(a.value, a.tickSize, "nearest") : null;
  if (!positive(a.entry)) return null;
  const v = dec(a.value).abs();
  const entry = dec(a.entry);
  // +1 when the trigger lies above the entry.
  const up = (a.kind === "tp") === (a.side === "BUY");
  let move: Big;
  if (a.method === "change") move = entry.times(v).div(100);
  else if (a.method === "roi") {
    const lev = positive(a.leverage) ? dec(a.leverage) : dec("1");
    move = entry.times(v).div(100).div(lev);
  } else {
    if (!positive(a.qty)) return null;
    move = v.div(dec(a.qty));
  }
  const t = up ? entry.plus(move) : entry.minus(move);
  return roundToStep(t, a.tickSize, "nearest");
}

export type TpSlIssue = "tp.above" | "tp.below" | "sl.above" | "sl.below" | "trigger.positive";

// The spec's rule: a take-profit of a buy must be greater than the order
// price and its stop-loss lower; the other way round for a sell.
export function checkTpSl(kind: TpSlKind, side: "BUY" | "SELL", trigger: string, orderPrice: string | undefined): TpSlIssue | null {
  if (!positive(trigger)) return "trigger.positive";
  if (!positive(orderPrice)) return null;
  const above = (kind === "tp") === (side === "BUY");
  const c = dec(trigger).cmp(dec(orderPrice));
  if (above && c <= 0) return kind === "tp" ? "tp.above" : "sl.above";
  if (!above && c >= 0) return kind === "tp" ? "tp.below" : "sl.below";
  return null;
}

// Return on margin of a position in percent: pnl / margin × 100, with the
// margin from the position or else notional / leverage. Null when unknown.
export function roiPercent(pnl: string | undefined, margin: string | undefined, notional?: string, leverage?: string): string | null {
  if (!isDecimal(pnl)) return null;
  let m: Big | null = positive(margin) ? dec(margin) : null;
  if (!m && isDecimal(notional) && positive(leverage)) m = dec(notional).abs().div(dec(leverage));
  if (!m || m.eq(0)) return null;
  return decimalString(dec(pnl).times(100).div(m).round(2, ROUND_HALF_UP));
}

// A fraction as a percentage with two decimals ("0.031549" -> "3.15"); null
// when it is not a decimal (the margin ratio is unknown).
export function ratioPercent(r: string | undefined): string | null {
  if (!isDecimal(r)) return null;
  return decimalString(dec(r).times(100).round(2, ROUND_HALF_UP));
}

// A margin ratio at or above 80% of the liquidation level.
export function marginRatioRisky(r: string | undefined): boolean {
  return isDecimal(r) && dec(r).gte("0.8");
}

// The leverage ceiling when the exchange gives none (the spec's default).
export const DEFAULT_MAX_LEVERAGE = "5";

// The highest whole leverage of an instrument: its maximum, or 5 when unknown.
export function maxLeverageOf(s: string | undefined): number {
  return isDecimal(s) && dec(s).gte(1) ? Number(roundToStep(s, "1", "down")) : Number(DEFAULT_MAX_LEVERAGE);
}
