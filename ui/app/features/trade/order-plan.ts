import type { MarginMode, MaxOrderSize, PlaceAlgoBody, PlaceOrderBody, PositionSide, Side } from "~/api/trading";
import { dec, isDecimal } from "~/lib/decimal";
import {
  checkOrderRules,
  checkTpSl,
  isOnGrid,
  qtyFromPercent,
  qtyFromQuote,
  tpslTrigger,
  type InstrumentRules,
  type TpSlMethod,
} from "./order-math";

// From the order form's values to the request the API gets, or the reasons
// it cannot be sent: one pure function, so the form's validation and its
// submit agree, and tests check both without a browser.

export type OrderKind = "LIMIT" | "MARKET" | "STOP_MARKET";
export type SizeMode = "qty" | "quote" | "percent";

export type OrderValues = {
  side: Side;
  // Hedge mode: open or close (with side: Open Long = open BUY, Close Long = close SELL ...).
  action: "open" | "close";
  kind: OrderKind;
  price: string;
  // "AI Price": a limit at the live best bid (buy) or best ask (sell), no typed price.
  ai: boolean;
  trigger: string;
  triggerType: "LAST" | "MARK";
  tif: "GTC" | "POST_ONLY" | "IOC" | "FOK";
  sizeMode: SizeMode;
  size: string;
  percent: string;
  reduceOnly: boolean;
  tpsl: boolean;
  tpMethod: TpSlMethod;
  tp: string;
  slMethod: TpSlMethod;
  sl: string;
  tpslType: "LAST" | "MARK";
};

export const defaultOrderValues: OrderValues = {
  side: "BUY",
  action: "open",
  kind: "LIMIT",
  price: "",
  ai: false,
  trigger: "",
  triggerType: "LAST",
  tif: "GTC",
  sizeMode: "qty",
  size: "",
  percent: "",
  reduceOnly: false,
  tpsl: false,
  tpMethod: "price",
  tp: "",
  slMethod: "price",
  sl: "",
  tpslType: "LAST",
};

export type PlanContext = {
  exchange: string;
  marketType: "SPOT" | "SWAP";
  symbol: string;
  rules: InstrumentRules;
  hedge: boolean;
  leverage?: string;
  marginMode?: MarginMode;
  bid?: string;
  ask?: string;
  last?: string;
  max?: MaxOrderSize;
  // The exchange prices a limit order from its own book on this market (AI
  // Price then sends price_match QUEUE instead of the quoted best price).
  priceMatch?: boolean;
  // TP/SL on entry needs both a take-profit and a stop-loss on this market
  // (the exchange takes them only as a pair).
  tpslBothLegs?: boolean;
};

export type PlanField = "price" | "size" | "percent" | "trigger" | "tp" | "sl";

export type PlanIssueCode =
  | "price.required"
  | "price.tick"
  | "price.min"
  | "price.max"
  | "qty.required"
  | "qty.step"
  | "qty.min"
  | "qty.max"
  | "qty.balance"
  | "notional.min"
  | "trigger.required"
  | "trigger.tick"
  | "trigger.positive"
  | "ai.unavailable"
  | "price.unavailable"
  | "max.unknown"
  | "tpsl.value"
  | "tpsl.both"
  | "tp.above"
  | "tp.below"
  | "sl.above"
  | "sl.below";

export type PlanIssue = { field: PlanField; code: PlanIssueCode; limit?: string };

export type OrderPlan = {
  issues: PlanIssue[];
  // Exactly one of order and algo when there are no issues.
  order?: PlaceOrderBody;
  algo?: PlaceAlgoBody;
  // The price the order is expected to execute at (TP/SL reference).
  entry?: string;
  qty?: string;
};

function positive(s: string | undefined): s is string {
  return isDecimal(s) && dec(s).gt(0);
}

// The position side an order acts on: hedge mode names it (open BUY and
// close BUY are LONG and SHORT), one-way mode leaves it to the exchange.
export function positionSideOf(v: Pick<OrderValues, "side" | "action">, hedge: boolean): PositionSide | undefined {
  if (!hedge) return undefined;
  const long = v.action === "open" ? v.side === "BUY" : v.side === "SELL";
  return long ? "LONG" : "SHORT";
}

// An order that only reduces a position: reduce-only in one-way mode, Close Long/Short in hedge mode.
export function closingOrder(v: Pick<OrderValues, "reduceOnly" | "action">, swap: boolean, hedge: boolean): boolean {
  return swap && (hedge ? v.action === "close" : v.reduceOnly);
}

export function planOrder(v: OrderValues, c: PlanContext): OrderPlan {
  const issues: PlanIssue[] = [];
  const swap = c.marketType === "SWAP";
  const hedge = swap && c.hedge;
  const market = v.kind !== "LIMIT";
  const opposite = v.side === "BUY" ? c.ask : c.bid;
  const sameSide = v.side === "BUY" ? c.bid : c.ask;

  // The price.
  let price: string | undefined;
  if (v.kind === "LIMIT") {
    if (v.ai) {
      // The quoted best price is the reference (size by amount, TP/SL) even
      // when the exchange sets the order's price itself.
      if (positive(sameSide)) price = sameSide;
      else if (!c.priceMatch) issues.push({ field: "price", code: "ai.unavailable" });
    } else price = v.price.trim();
  }
  let trigger: string | undefined;
  if (v.kind === "STOP_MARKET") {
    trigger = v.trigger.trim();
    if (!positive(trigger)) issues.push({ field: "trigger", code: "trigger.required" });
    else if (!isOnGrid(trigger, c.rules.tickSize)) issues.push({ field: "trigger", code: "trigger.tick", limit: c.rules.tickSize });
  }
  // Where a market order is expected to fill: the best opposite price, else the last.
  const ref = v.kind === "LIMIT" ? price : v.kind === "STOP_MARKET" && positive(trigger) ? trigger : positive(opposite) ? opposite : c.last;

  // The size in base units (or a quote amount for a spot market buy).
  const step = market && positive(c.rules.marketStepSize) ? c.rules.marketStepSize : c.rules.stepSize;
  let qty: string | undefined;
  let quoteQty: string | undefined;
  const sizeField: PlanField = v.sizeMode === "percent" ? "percent" : "size";
  if (v.sizeMode === "qty") qty = v.size.trim();
  else if (v.sizeMode === "quote") {
    const amount = v.size.trim();
    if (!positive(amount)) issues.push({ field: "size", code: "qty.required" });
    else if (!swap && v.kind === "MARKET" && v.side === "BUY") quoteQty = amount;
    else {
      const q = qtyFromQuote(amount, ref, step);
      if (q === null) issues.push({ field: "size", code: "price.unavailable" });
      else qty = q;
    }
  } else {
    const max = v.side === "BUY" ? c.max?.max_buy_qty : c.max?.max_sell_qty;
    if (!positive(v.percent.trim())) issues.push({ field: "percent", code: "qty.required" });
    else if (!isDecimal(max)) issues.push({ field: "percent", code: "max.unknown" });
    else qty = qtyFromPercent(v.percent.trim(), max, step) ?? undefined;
  }

  // The instrument's rules.
  if (quoteQty !== undefined) {
    if (positive(c.rules.minNotional) && dec(quoteQty).lt(dec(c.rules.minNotional))) {
      issues.push({ field: "size", code: "notional.min", limit: c.rules.minNotional });
    }
  } else if (qty !== undefined || v.sizeMode === "qty") {
    const found = checkOrderRules(c.rules, {
      type: market ? "MARKET" : "LIMIT",
      price: v.kind === "LIMIT" ? (price ?? "") : undefined,
      qty: qty ?? "",
      refPrice: ref,
    });
    for (const f of found) {
      if (f.field === "price" && (v.ai || issues.some((i) => i.field === "price"))) continue;
      issues.push({ field: f.field === "price" ? "price" : sizeField, code: f.code, limit: f.limit });
    }
  }
  // More than the account can open now (never checked for closing orders).
  const closing = closingOrder(v, swap, hedge);
  const maxNow = v.side === "BUY" ? c.max?.max_buy_qty : c.max?.max_sell_qty;
  if (!closing && positive(qty) && isDecimal(maxNow) && dec(qty).gt(dec(maxNow)) && !issues.some((i) => i.field === sizeField)) {
    issues.push({ field: sizeField, code: "qty.balance", limit: maxNow });
  }

  // Take-profit and stop-loss on entry.
  let takeProfit: string | undefined;
  let stopLoss: string | undefined;
  if (v.tpsl && v.kind !== "STOP_MARKET" && !closing) {
    const entry = ref;
    for (const kind of ["tp", "sl"] as const) {
      const raw = (kind === "tp" ? v.tp : v.sl).trim();
      if (raw === "") {
        const other = (kind === "tp" ? v.sl : v.tp).trim();
        if (c.tpslBothLegs && other !== "") issues.push({ field: kind, code: "tpsl.both" });
        continue;
      }
      const t = tpslTrigger({
        kind,
        method: kind === "tp" ? v.tpMethod : v.slMethod,
        value: raw,
        side: v.side,
        entry,
        leverage: swap ? c.leverage : undefined,
        qty: qty ?? (quoteQty && positive(entry) ? qtyFromQuote(quoteQty, entry, step) ?? undefined : undefined),
        tickSize: c.rules.tickSize,
      });
      if (t === null) {
        issues.push({ field: kind, code: "tpsl.value" });
        continue;
      }
      const bad = checkTpSl(kind, v.side, t, entry);
      if (bad) issues.push({ field: kind, code: bad, limit: t });
      else if (kind === "tp") takeProfit = t;
      else stopLoss = t;
    }
  }

  if (issues.length > 0) return { issues, entry: ref, qty };
  const positionSide = positionSideOf(v, hedge);
  const marginMode = swap ? c.marginMode : undefined;
  const reduceOnly = swap && !hedge && v.reduceOnly ? true : undefined;
  if (v.kind === "STOP_MARKET") {
    return {
      issues,
      entry: ref,
      qty,
      algo: {
        exchange: c.exchange,
        market_type: c.marketType,
        symbol: c.symbol,
        side: v.side,
        type: "STOP_MARKET",
        trigger_price: trigger!,
        trigger_price_type: v.triggerType,
        qty,
        reduce_only: reduceOnly,
        position_side: positionSide,
        margin_mode: marginMode,
      },
    };
  }
  const tpslType = v.tpslType;
  // AI Price where the exchange has its own best-price order: no price, the
  // exchange takes its best bid (buy) or ask (sell) when it places the order.
  const matched = v.kind === "LIMIT" && v.ai && c.priceMatch === true;
  return {
    issues,
    entry: ref,
    qty,
    order: {
      exchange: c.exchange,
      market_type: c.marketType,
      symbol: c.symbol,
      side: v.side,
      type: v.kind === "LIMIT" ? "LIMIT" : "MARKET",
      time_in_force: v.kind === "LIMIT" ? v.tif : undefined,
      price: v.kind === "LIMIT" && !matched ? price : undefined,
      price_match: matched ? "QUEUE" : undefined,
      qty: quoteQty === undefined ? qty : undefined,
      quote_qty: quoteQty,
      reduce_only: reduceOnly,
      position_side: positionSide,
      margin_mode: marginMode,
      take_profit: takeProfit ? { trigger_price: takeProfit, trigger_price_type: tpslType } : undefined,
      stop_loss: stopLoss ? { trigger_price: stopLoss, trigger_price_type: tpslType } : undefined,
    },
  };
}
