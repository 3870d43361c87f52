import { useLingui } from "@lingui/react/macro";
import { useMemo, useRef } from "react";
import { z } from "zod";
import { queryClient } from "~/api/queries";
import { newIdempotencyKey, TRADING_KEY, tradingApi, type Position, type TriggerPriceType } from "~/api/trading";
import { Field, Form, FormError, SubmitButton, useZodForm } from "~/components/form";
import { Dialog } from "~/components/ui";
import { dec, isDecimal } from "~/lib/decimal";
import { ApiError } from "~/lib/errors";
import type { Instrument } from "./api";
import { codeText, issueText, outcome } from "./messages";
import { checkTpSl, isOnGrid } from "./order-math";
import { pushToast } from "./toasts";

// Take-profit and stop-loss on an open position: conditional market orders
// that close the whole position when the trigger is reached
// (POST /api/v1/algo-orders with close_position). A long's take-profit must
// be above its reference price (mark, else entry) and its stop-loss below;
// the other way round for a short.

type Props = {
  exchange: string;
  position: Position;
  instrument: Instrument;
  triggerTypes: string[];
  onClose: () => void;
};

export function isLong(x: Position): boolean {
  return x.position_side === "LONG" || (x.position_side === "NET" && isDecimal(x.qty) && !dec(x.qty).lt(0));
}

export default function PositionTpSl({ exchange, position: x, instrument, triggerTypes, onClose }: Props) {
  const { t, i18n } = useLingui();
  const long = isLong(x);
  const ref = x.mark_price || x.entry_price;
  const sameSymbol = x.symbol === instrument.symbol;
  // One key per order for as long as the dialog is open: a retry answers the same order.
  const keys = useRef({ tp: newIdempotencyKey(), sl: newIdempotencyKey() });
  const done = useRef({ tp: false, sl: false });
  const schema = useMemo(
    () =>
      z
        .object({ tp: z.string(), sl: z.string(), type: z.enum(["LAST", "MARK"]) })
        .superRefine((v, ctx) => {
          if (v.tp.trim() === "" && v.sl.trim() === "") {
            ctx.addIssue({ code: "custom", path: ["tp"], message: t`Enter a take-profit or a stop-loss price.` });
            return;
          }
          for (const kind of ["tp", "sl"] as const) {
            const raw = v[kind].trim();
            if (raw === "") continue;
            if (!isDecimal(raw) || !dec(raw).gt(0)) {
              ctx.addIssue({ code: "custom", path: [kind], message: issueText(i18n, { field: kind, code: "trigger.positive" }) });
              continue;
            }
            if (sameSymbol && !isOnGrid(raw, instrument.tickSize)) {
              ctx.addIssue({ code: "custom", path: [kind], message: issueText(i18n, { field: kind, code: "trigger.tick", limit: instrument.tickSize }) });
              continue;
            }
            const bad = checkTpSl(kind, long ? "BUY" : "SELL", raw, ref);
            if (bad) {
              const msg =
                bad === "tp.above"
                  ? t`The take-profit price must be greater than the position's price.`
                  : bad === "tp.below"
                    ? t`The take-profit price must be lower than the position's price.`
                    : bad === "sl.above"
                      ? t`The stop-loss price must be greater than the position's price.`
                      : t`The stop-loss price must be lower than the position's price.`;
              ctx.addIssue({ code: "custom", path: [kind], message: msg });
            }
          }
        }),
    [t, i18n, sameSymbol, instrument.tickSize, long, ref],
  );
  const form = useZodForm(schema, { defaultValues: { tp: "", sl: "", type: "LAST" as const } });
  const submit = async (v: z.output<typeof schema>) => {
    for (const kind of ["tp", "sl"] as const) {
      const trigger = v[kind].trim();
      if (trigger === "" || done.current[kind]) continue;
      try {
        const r = await tradingApi.placeAlgo(
          {
            exchange,
            market_type: "SWAP",
            symbol: x.symbol,
            side: long ? "SELL" : "BUY",
            type: kind === "tp" ? "TAKE_PROFIT_MARKET" : "STOP_MARKET",
            trigger_price: trigger,
            trigger_price_type: v.type as TriggerPriceType,
            close_position: true,
            position_side: x.position_side === "NET" ? undefined : x.position_side,
          },
          keys.current[kind],
        );
        done.current[kind] = true;
        pushToast(r.httpStatus === 202 ? { kind: "info", text: i18n._(outcome.pending) } : { kind: "success", text: i18n._(outcome.placed) });
      } catch (e) {
        // A refusal gets a new key for the next attempt; a lost answer keeps it.
        if (e instanceof ApiError && e.status < 500) keys.current[kind] = newIdempotencyKey();
        const why = e instanceof ApiError ? (codeText(i18n, e.code) ?? e.problem.detail ?? e.problem.title) : t`Network anomaly`;
        form.setError("root.server", { type: "server", message: `${i18n._(outcome.failed)}: ${why}` });
        void queryClient.invalidateQueries({ queryKey: TRADING_KEY });
        return;
      }
    }
    void queryClient.invalidateQueries({ queryKey: TRADING_KEY });
    onClose();
  };
  const { register } = form;
  return (
    <Dialog isOpen onOpenChange={(open) => !open && onClose()} title={t`TP/SL for ${x.symbol}`} testId="position-tpsl">
      <p className="dialog-note">
        {long ? t`Long` : t`Short`} · {t`Mark price`}: {x.mark_price ?? "—"} · {t`Entry price`}: {x.entry_price ?? "—"}
      </p>
      <Form form={form} onSubmit={submit} aria-label={t`TP/SL for ${x.symbol}`}>
        <Field name="tp" label={t`Take profit (trigger price)`}>
          {(c) => <input className="input" inputMode="decimal" autoComplete="off" data-testid="position-tp" {...c} {...register("tp")} />}
        </Field>
        <Field name="sl" label={t`Stop loss (trigger price)`}>
          {(c) => <input className="input" inputMode="decimal" autoComplete="off" data-testid="position-sl" {...c} {...register("sl")} />}
        </Field>
        <Field name="type" label={t`Trigger price type`}>
          {(c) => (
            <select className="input" {...c} {...register("type")}>
              <option value="LAST">{t`Last price`}</option>
              {triggerTypes.includes("MARK") ? <option value="MARK">{t`Mark price`}</option> : null}
            </select>
          )}
        </Field>
        <FormError />
        <SubmitButton testId="position-tpsl-save">{t`Confirm`}</SubmitButton>
      </Form>
    </Dialog>
  );
}
