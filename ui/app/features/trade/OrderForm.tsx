import { useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { useFormContext, useWatch } from "react-hook-form";
import { z } from "zod";
import { queryClient } from "~/api/queries";
import {
  newIdempotencyKey,
  TRADING_KEY,
  tradingApi,
  tradingQueries,
  type MarginMode,
  type Order,
  type Placed,
} from "~/api/trading";
import { CheckboxField, Field, Form, FormError, SubmitButton, useZodForm } from "~/components/form";
import { ApiError } from "~/lib/errors";
import { isDecimal } from "~/lib/decimal";
import { useFormat } from "~/lib/format";
import { availableOf, type StreamBalance } from "./account-stream";
import type { Instrument } from "./api";
import { codeText, issueText, outcome } from "./messages";
import { closingOrder, defaultOrderValues, planOrder, positionSideOf, type OrderValues, type PlanContext } from "./order-plan";
import { tpslTrigger } from "./order-math";
import { pushToast } from "./toasts";

// The order form of the trade screen (signed-in member with an account on
// the exchange): Buy/Sell (Open/Close Long/Short in hedge mode), Limit,
// Market and Stop Market, time in force, reduce-only, size by quantity,
// quote amount or percent of the largest size, TP/SL on entry, AI Price.
// The instrument's rules are checked before anything is sent
// (order-plan.ts); every submit attempt carries one Idempotency-Key, reused
// while the same request is retried.

export type MarketQuote = { bid?: string; ask?: string; last?: string; mark?: string };

export type TradingCaps = {
  orderTypes: string[];
  timeInForce: string[];
  reduceOnly: boolean;
  tpsl: boolean;
  triggerPriceTypes: string[];
  // Market types (SPOT, SWAP) where the exchange prices a limit order from its own book.
  priceMatch?: string[];
  // Market types where an order takes TP/SL on entry (armed by the exchange,
  // or by exhub once a SWAP entry fills); absent: the flat tpsl flag.
  tpslOnEntry?: string[];
  // What TP/SL on entry takes per market type (absent: no constraint known).
  tpslOnEntryRules?: TpSlOnEntryRule[];
};

// The BFF's TpSlOnEntryRules: the entry order types that take TP/SL, whether
// both legs must be given, the trigger price types of the legs.
export type TpSlOnEntryRule = {
  marketType: string;
  orderTypes: string[];
  bothLegs: boolean;
  triggerPriceTypes: string[];
  limitPrice: boolean;
};

// The rule of one market type, if the exchange states one.
export function tpslRuleOf(caps: TradingCaps, marketType: string): TpSlOnEntryRule | undefined {
  return caps.tpslOnEntryRules?.find((r) => r.marketType === marketType);
}

export type OrderFormProps = {
  exchange: string;
  marketType: "SPOT" | "SWAP";
  instrument: Instrument;
  caps: TradingCaps;
  quote: MarketQuote;
  // The freshest quote at submit time (AI Price).
  readQuote: () => MarketQuote;
  balances: StreamBalance[];
  hedge: boolean;
  leverage?: string;
  marginMode?: MarginMode;
};

const values = z.object({
  side: z.enum(["BUY", "SELL"]),
  action: z.enum(["open", "close"]),
  kind: z.enum(["LIMIT", "MARKET", "STOP_MARKET"]),
  price: z.string(),
  ai: z.boolean(),
  trigger: z.string(),
  triggerType: z.enum(["LAST", "MARK"]),
  tif: z.enum(["GTC", "POST_ONLY", "IOC", "FOK"]),
  sizeMode: z.enum(["qty", "quote", "percent"]),
  size: z.string(),
  percent: z.string(),
  reduceOnly: z.boolean(),
  tpsl: z.boolean(),
  tpMethod: z.enum(["price", "roi", "change", "pnl"]),
  tp: z.string(),
  slMethod: z.enum(["price", "roi", "change", "pnl"]),
  sl: z.string(),
  tpslType: z.enum(["LAST", "MARK"]),
});

const FINAL_FAILURES = new Set(["rejected", "not_placed", "expired", "failed"]);
// A pending order is read every second, then less often while it stays pending (up to every 10 s).
const PENDING_POLL_MS = 1000;
const PENDING_POLL_MAX_MS = 10_000;
const PRICE_SETTLE_MS = 300;

// value, once it has not changed for ms.
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export function OrderForm(p: OrderFormProps) {
  const { t, i18n } = useLingui();
  const swap = p.marketType === "SWAP";
  const hedge = swap && p.hedge;
  const i = p.instrument;
  const ctx = useRef<PlanContext>(null as unknown as PlanContext);
  const maxRef = useRef<PlanContext["max"]>(undefined);
  ctx.current = {
    exchange: p.exchange,
    marketType: p.marketType,
    symbol: i.symbol,
    rules: i,
    hedge,
    leverage: p.leverage,
    marginMode: p.marginMode,
    bid: p.quote.bid,
    ask: p.quote.ask,
    last: p.quote.last,
    max: maxRef.current,
    priceMatch: p.caps.priceMatch?.includes(p.marketType) ?? false,
    tpslBothLegs: tpslRuleOf(p.caps, p.marketType)?.bothLegs ?? false,
  };
  const live = () => ({ ...ctx.current, ...definedOnly(p.readQuote()), max: maxRef.current });
  const schema = useMemo(
    () =>
      values.superRefine((v, z2) => {
        for (const issue of planOrder(v as OrderValues, live()).issues) {
          z2.addIssue({ code: "custom", path: [issue.field], message: issueText(i18n, issue) });
        }
      }),
    // live() reads refs: the schema only changes with the language.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [i18n, i18n.locale],
  );
  const form = useZodForm(schema, { defaultValues: defaultOrderValues });
  const v = useWatch({ control: form.control }) as OrderValues;
  const key = useRef<{ key: string; body: string } | null>(null);
  const [pending, setPending] = useState<Order[]>([]);

  // The largest buy and sell now (at the typed price for a limit order).
  // The typed price settles for a moment before the maximum is asked again (not once per keystroke).
  const limitPrice = useSettled(v.kind === "LIMIT" && !v.ai && isDecimal(v.price) ? v.price.trim() : undefined, PRICE_SETTLE_MS);
  const maxQ = useQuery(
    {
      ...tradingQueries.maxOrderSize({
        exchange: p.exchange,
        market_type: p.marketType,
        symbol: i.symbol,
        price: limitPrice,
        position_side: positionSideOf(v, hedge),
        margin_mode: swap ? p.marginMode : undefined,
      }),
      placeholderData: (prev) => prev,
    },
    queryClient,
  );
  maxRef.current = maxQ.data;
  ctx.current.max = maxQ.data;

  const submit = async (vals: OrderValues) => {
    // The form's own error line (a thrown error would show as a network failure).
    const fail = (message: string) => form.setError("root.server", { type: "server", message });
    const plan = planOrder(vals, live());
    if (plan.issues.length > 0) return fail(issueText(i18n, plan.issues[0]!));
    const body = JSON.stringify(plan.order ?? plan.algo);
    if (!key.current || key.current.body !== body) key.current = { key: newIdempotencyKey(), body };
    let placed: Placed;
    try {
      placed = plan.algo ? await tradingApi.placeAlgo(plan.algo, key.current.key) : await tradingApi.placeOrder(plan.order!, key.current.key);
    } catch (e) {
      if (e instanceof ApiError && e.status >= 400 && e.status < 500) {
        // Refused: a new attempt gets a new key.
        key.current = null;
        if (e.code === "insufficient_funds") {
          pushToast({
            kind: "error",
            text: i18n._(outcome.insufficient),
            actions: [
              { label: t`Deposit`, to: "/wallet?tab=deposit" },
              { label: t`Transfer`, to: "/wallet?tab=transfer" },
            ],
          });
          return fail(i18n._(outcome.insufficient));
        }
        const why = codeText(i18n, e.code) ?? e.problem.detail ?? e.problem.title;
        pushToast({ kind: "error", text: i18n._(outcome.failed), detail: why });
        return fail(why);
      }
      // The answer was lost (network, timeout, 5xx): the order may exist.
      // The key is kept, so submitting the same order again answers the same one.
      pushToast({ kind: "info", text: i18n._(outcome.unknown) });
      return fail(i18n._(outcome.unknown));
    }
    key.current = null;
    void queryClient.invalidateQueries({ queryKey: TRADING_KEY });
    report(placed.order, placed.httpStatus === 202 || placed.order.status === "pending");
    if (placed.httpStatus === 202 || placed.order.status === "pending") {
      setPending((l) => (placed.order.id && !l.some((x) => x.id === placed.order.id) ? [...l, placed.order] : l));
    }
    form.setValue("size", "");
    form.setValue("percent", "");
  };

  const report = (o: Order, isPending: boolean) => {
    if (isPending) pushToast({ kind: "info", text: i18n._(outcome.pending) });
    else if (FINAL_FAILURES.has(o.status)) pushToast({ kind: "error", text: i18n._(outcome.failed), detail: o.reject_message });
    else pushToast({ kind: "success", text: i18n._(outcome.placed) });
  };

  const resolved = (o: Order) => {
    setPending((l) => l.filter((x) => x.id !== o.id));
    report(o, false);
    void queryClient.invalidateQueries({ queryKey: TRADING_KEY });
  };

  const base = i.base;
  const quoteAsset = swap ? i.settle || i.quote : i.quote;
  const kinds = (["LIMIT", "MARKET", "STOP_MARKET"] as const).filter((k) => k !== "STOP_MARKET" || p.caps.orderTypes.includes("STOP_MARKET"));
  const kindLabel = { LIMIT: t`Limit`, MARKET: t`Market`, STOP_MARKET: t`Stop Market` };
  const sideLabel = (side: "BUY" | "SELL") =>
    hedge
      ? v.action === "open"
        ? side === "BUY"
          ? t`Open Long`
          : t`Open Short`
        : side === "BUY"
          ? t`Close Short`
          : t`Close Long`
      : swap
        ? side === "BUY"
          ? t`Buy / Long`
          : t`Sell / Short`
        : side === "BUY"
          ? t`Buy`
          : t`Sell`;
  const avail = availableOf(p.balances, swap ? quoteAsset : v.side === "BUY" ? i.quote : base);
  const maxNow = v.side === "BUY" ? maxQ.data?.max_buy_qty : maxQ.data?.max_sell_qty;
  // TP/SL belong to an entry: not to a stop order nor to an order that closes,
  // and only to the entry order types the exchange takes them on.
  const tpslHere = p.caps.tpslOnEntry ? p.caps.tpslOnEntry.includes(p.marketType) : p.caps.tpsl;
  const tpslRule = tpslRuleOf(p.caps, p.marketType);
  const tpslKindOK = !tpslRule || tpslRule.orderTypes.length === 0 || tpslRule.orderTypes.includes(v.kind);
  const tpslEntry = tpslHere && v.kind !== "STOP_MARKET" && !closingOrder(v, swap, hedge);
  const entryTpSl = tpslEntry && tpslKindOK;

  return (
    <Form form={form} onSubmit={submit} className="order-form" aria-label={t`Place order`} data-testid="order-form">
      {hedge ? (
        <div className="seg" role="group" aria-label={t`Open or close`}>
          <SegButton name="action" value="open" label={t`Open`} testId="action-open" />
          <SegButton name="action" value="close" label={t`Close`} testId="action-close" />
        </div>
      ) : null}
      <div className="seg seg--sides" role="group" aria-label={t`Side`}>
        <SegButton name="side" value="BUY" label={sideLabel("BUY")} className="seg-buy" testId="side-buy" />
        <SegButton name="side" value="SELL" label={sideLabel("SELL")} className="seg-sell" testId="side-sell" />
      </div>
      <div className="seg seg--kinds" role="group" aria-label={t`Order type`}>
        {kinds.map((k) => (
          <SegButton key={k} name="kind" value={k} label={kindLabel[k]} testId={`kind-${k.toLowerCase()}`} />
        ))}
      </div>
      {v.kind === "LIMIT" ? (
        <>
          {v.ai ? (
            <Field name="price" label={t`Price (${i.quote})`}>
              {(c) => (
                <output {...c} className="input input--output" data-testid="ai-price">
                  {(v.side === "BUY" ? p.quote.bid : p.quote.ask) ?? "—"}
                </output>
              )}
            </Field>
          ) : (
            <DecimalField name="price" label={t`Price (${i.quote})`} testId="order-price" />
          )}
          <CheckboxField
            name="ai"
            label={t`AI Price`}
            description={
              ctx.current.priceMatch
                ? v.side === "BUY"
                  ? t`The exchange enters at its best bid when it takes the order.`
                  : t`The exchange enters at its best ask when it takes the order.`
                : v.side === "BUY"
                  ? t`Enter at the best bid.`
                  : t`Enter at the best ask.`
            }
          />
          <SelectField
            name="tif"
            label={t`Time in force`}
            options={(["GTC", "POST_ONLY", "IOC", "FOK"] as const)
              .filter((x) => x === "GTC" || p.caps.timeInForce.includes(x))
              .map((x) => ({ value: x, label: { GTC: t`Good till cancelled`, POST_ONLY: t`Post only`, IOC: t`Immediate or cancel`, FOK: t`Fill or kill` }[x] }))}
            testId="order-tif"
          />
        </>
      ) : null}
      {v.kind === "STOP_MARKET" ? (
        <>
          <DecimalField name="trigger" label={t`Trigger price (${i.quote})`} testId="order-trigger" />
          <SelectField
            name="triggerType"
            label={t`Trigger price type`}
            options={[
              { value: "LAST", label: t`Last price` },
              ...(p.caps.triggerPriceTypes.includes("MARK") ? [{ value: "MARK", label: t`Mark price` }] : []),
            ]}
          />
        </>
      ) : null}
      <SelectField
        name="sizeMode"
        label={t`Size by`}
        options={[
          { value: "qty", label: t`Quantity (${base})` },
          { value: "quote", label: t`Amount (${i.quote})` },
          { value: "percent", label: t`% of the maximum` },
        ]}
        testId="order-size-mode"
      />
      {v.sizeMode === "percent" ? (
        <PercentField label={t`Size (% of the maximum)`} />
      ) : (
        <DecimalField name="size" label={v.sizeMode === "qty" ? t`Size (${base})` : t`Amount (${i.quote})`} testId="order-size" />
      )}
      <OrderFacts avail={avail} availAsset={swap ? quoteAsset : v.side === "BUY" ? i.quote : base} max={maxNow} base={base} step={i.stepSize} />
      {swap && !hedge && p.caps.reduceOnly ? <CheckboxField name="reduceOnly" label={t`Reduce-Only`} /> : null}
      {entryTpSl ? (
        <CheckboxField
          name="tpsl"
          label={t`TP/SL`}
          description={tpslRule?.bothLegs ? t`This exchange takes a take-profit and a stop-loss together.` : undefined}
        />
      ) : null}
      {tpslEntry && !tpslKindOK && tpslRule?.orderTypes.includes("LIMIT") ? (
        <p className="field-description" data-testid="tpsl-limit-only">
          {t`TP/SL on entry: limit orders only on this exchange.`}
        </p>
      ) : null}
      {entryTpSl && v.tpsl ? (
        <TpSlFields p={p} v={v} triggerTypes={tpslRule?.triggerPriceTypes.length ? tpslRule.triggerPriceTypes : p.caps.triggerPriceTypes} />
      ) : null}
      <FormError />
      <SubmitButton className={`button order-submit order-submit--${v.side === "BUY" ? "buy" : "sell"}`} testId="order-submit">
        {sideLabel(v.side)}
      </SubmitButton>
      {pending.length > 0 ? (
        <ul className="order-pending" aria-label={t`Orders being confirmed`} data-testid="pending-orders">
          {pending.map((o) => (
            <PendingOrder key={o.id} order={o} onResolved={resolved} />
          ))}
        </ul>
      ) : null}
    </Form>
  );
}

function definedOnly(q: MarketQuote): MarketQuote {
  const out: MarketQuote = {};
  for (const [k, val] of Object.entries(q)) if (val) out[k as keyof MarketQuote] = val;
  return out;
}

function SegButton({ name, value, label, className, testId }: { name: string; value: string; label: string; className?: string; testId?: string }) {
  const { setValue, control } = useFormContext();
  const cur = useWatch({ control, name }) as string;
  return (
    <button
      type="button"
      aria-pressed={cur === value}
      className={className}
      data-testid={testId}
      onClick={() => setValue(name, value, { shouldDirty: true })}
    >
      {label}
    </button>
  );
}

function DecimalField({ name, label, testId }: { name: string; label: string; testId?: string }) {
  const { register } = useFormContext();
  return (
    <Field name={name} label={label}>
      {(c) => <input className="input" type="text" inputMode="decimal" autoComplete="off" data-testid={testId} {...c} {...register(name)} />}
    </Field>
  );
}

function SelectField({ name, label, options, testId }: { name: string; label: string; options: { value: string; label: string }[]; testId?: string }) {
  const { register } = useFormContext();
  return (
    <Field name={name} label={label}>
      {(c) => (
        <select className="input" data-testid={testId} {...c} {...register(name)}>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

function PercentField({ label }: { label: string }) {
  const { t } = useLingui();
  const { register, setValue } = useFormContext();
  return (
    <Field name="percent" label={label}>
      {(c) => (
        <div className="order-percent">
          <input className="input" type="text" inputMode="decimal" data-testid="order-percent" {...c} {...register("percent")} />
          <div className="seg" role="group" aria-label={t`Quick percentages`}>
            {["25", "50", "75", "100"].map((x) => (
              <button key={x} type="button" onClick={() => setValue("percent", x, { shouldValidate: true })}>
                {x}%
              </button>
            ))}
          </div>
        </div>
      )}
    </Field>
  );
}

function OrderFacts({ avail, availAsset, max, base, step }: { avail?: string; availAsset: string; max?: string; base: string; step: string }) {
  const { t } = useLingui();
  const f = useFormat();
  return (
    <dl className="order-facts" data-testid="order-facts">
      <div>
        <dt>{t`Available`}</dt>
        <dd data-testid="available" title={`${avail ? f.decimal(avail, 8) : "—"} ${availAsset}`}>
          {avail ? f.decimal(avail, 8) : "—"} {availAsset}
        </dd>
      </div>
      <div>
        <dt>{t`Max`}</dt>
        <dd data-testid="max-size">
          {max ? f.step(max, step) : "—"} {base}
        </dd>
      </div>
    </dl>
  );
}

function TpSlFields({ p, v, triggerTypes }: { p: OrderFormProps; v: OrderValues; triggerTypes: string[] }) {
  const { t } = useLingui();
  const { setValue } = useFormContext<OrderValues>();
  // A trigger type this market does not take (chosen on another market) goes back to the last price.
  useEffect(() => {
    if (v.tpslType === "MARK" && !triggerTypes.includes("MARK")) setValue("tpslType", "LAST");
  }, [v.tpslType, triggerTypes, setValue]);
  const swap = p.marketType === "SWAP";
  const methods = [
    { value: "price", label: t`Price` },
    ...(swap ? [{ value: "roi", label: t`ROI %` }] : []),
    { value: "change", label: t`Change %` },
    { value: "pnl", label: t`PnL (${p.instrument.quote})` },
  ];
  const entry = v.kind === "LIMIT" ? (v.ai ? (v.side === "BUY" ? p.quote.bid : p.quote.ask) : v.price) : v.side === "BUY" ? (p.quote.ask ?? p.quote.last) : (p.quote.bid ?? p.quote.last);
  const preview = (kind: "tp" | "sl") =>
    tpslTrigger({
      kind,
      method: kind === "tp" ? v.tpMethod : v.slMethod,
      value: (kind === "tp" ? v.tp : v.sl).trim(),
      side: v.side,
      entry: isDecimal(entry) ? entry : undefined,
      leverage: swap ? p.leverage : undefined,
      qty: v.sizeMode === "qty" ? v.size.trim() : undefined,
      tickSize: p.instrument.tickSize,
    });
  return (
    <fieldset className="order-tpsl" data-testid="order-tpsl">
      <legend>{t`Take profit / stop loss`}</legend>
      {(["tp", "sl"] as const).map((kind) => {
        const trig = preview(kind);
        return (
          <div key={kind} className="order-tpsl-row">
            <SelectField name={kind === "tp" ? "tpMethod" : "slMethod"} label={kind === "tp" ? t`Take profit by` : t`Stop loss by`} options={methods} testId={`${kind}-method`} />
            <DecimalField name={kind} label={kind === "tp" ? t`Take profit` : t`Stop loss`} testId={`order-${kind}`} />
            <p className="order-tpsl-trigger" data-testid={`${kind}-trigger`}>
              {t`Trigger price`}: {trig ?? "—"}
            </p>
          </div>
        );
      })}
      <SelectField
        name="tpslType"
        label={t`Trigger price type`}
        options={[
          ...(triggerTypes.length === 0 || triggerTypes.includes("LAST") ? [{ value: "LAST", label: t`Last price` }] : []),
          ...(triggerTypes.includes("MARK") ? [{ value: "MARK", label: t`Mark price` }] : []),
        ]}
      />
    </fieldset>
  );
}

// An order whose outcome the exchange has not confirmed yet (202): shown as
// pending, never as failed, and read again until its state is known.
function PendingOrder({ order, onResolved }: { order: Order; onResolved: (o: Order) => void }) {
  const { t } = useLingui();
  const q = useQuery(
    {
      queryKey: [...TRADING_KEY, "order", order.id],
      queryFn: ({ signal }) => tradingApi.order(order.id!, signal),
      refetchInterval: (query) => {
        if (query.state.data && query.state.data.status !== "pending") return false;
        const reads = query.state.dataUpdateCount + query.state.errorUpdateCount;
        return Math.min(PENDING_POLL_MS * 2 ** Math.floor(reads / 10), PENDING_POLL_MAX_MS);
      },
      // A failed read is simply made again at the next interval.
      retry: false,
    },
    queryClient,
  );
  const status = q.data?.status ?? "pending";
  useEffect(() => {
    if (q.data && q.data.status !== "pending") onResolved(q.data);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [q.data?.status]);
  return (
    <li data-status={status}>
      {order.symbol} {order.side} {order.qty ?? order.quote_qty}: {t`Pending`}
    </li>
  );
}
