import type { I18n } from "@lingui/core";
import { useLingui } from "@lingui/react/macro";
import { useState } from "react";
import { z } from "zod";
import { queryClient } from "~/api/queries";
import { TRADING_KEY, tradingApi, type MarginMode, type PositionModeValue } from "~/api/trading";
import { Field, Form, FormError, SubmitButton, useZodForm } from "~/components/form";
import { Dialog } from "~/components/ui";
import { isDecimal } from "~/lib/decimal";
import { errorText } from "~/lib/errors";
import { preferencesSnapshot, readPreferences, updatePreferences } from "~/features/dashboard/sync";
import { useMember } from "~/lib/session";
import { ALERTS, alertOn, volumeOf, type AlertKind } from "./alerts";
import { codeText, outcome } from "./messages";
import { maxLeverageOf } from "./order-math";
import { pushToast } from "./toasts";

// The futures settings of a symbol, each saved to the exchange through the
// API and shown once the exchange took it: leverage (1 to the instrument's
// maximum, 5 when the exchange gives none), margin mode (Cross/Isolated) and
// position mode (One-Way/Hedge, for the whole exchange account).

export type SettingsKind = "leverage" | "margin" | "position" | "preferences";

type Props = {
  kind: SettingsKind;
  onClose: () => void;
  exchange: string;
  symbol: string;
  maxLeverage: string;
  leverage?: string;
  marginMode?: MarginMode;
  marginModes: string[];
  positionMode?: PositionModeValue;
};


export default function SettingsDialog(p: Props) {
  const { t } = useLingui();
  const title =
    p.kind === "leverage" ? t`Leverage` : p.kind === "margin" ? t`Margin mode` : p.kind === "position" ? t`Position mode` : t`Preferences`;
  return (
    <Dialog isOpen onOpenChange={(open) => !open && p.onClose()} title={title} testId={`settings-${p.kind}`}>
      {p.kind === "leverage" ? (
        <LeverageForm {...p} />
      ) : p.kind === "margin" ? (
        <MarginForm {...p} />
      ) : p.kind === "position" ? (
        <PositionModeForm {...p} />
      ) : (
        <PreferencesForm {...p} />
      )}
    </Dialog>
  );
}

function saved(i18n: I18n) {
  pushToast({ kind: "success", text: i18n._(outcome.setting) });
  void queryClient.invalidateQueries({ queryKey: TRADING_KEY });
}

function LeverageForm(p: Props) {
  const { t, i18n } = useLingui();
  const max = maxLeverageOf(p.maxLeverage);
  const schema = z.object({
    leverage: z
      .string()
      .trim()
      .refine((s) => /^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= max, t`Choose a leverage from 1 to ${max}.`),
  });
  const start = isDecimal(p.leverage) ? String(Math.min(max, Math.max(1, Math.floor(Number(p.leverage))))) : String(Math.min(5, max));
  const form = useZodForm(schema, { defaultValues: { leverage: start } });
  const value = form.watch("leverage");
  return (
    <Form
      form={form}
      onSubmit={async (v) => {
        try {
          await tradingApi.setLeverage({ exchange: p.exchange, symbol: p.symbol, leverage: v.leverage, margin_mode: p.marginMode });
        } catch (e) {
          form.setError("root.server", { type: "server", message: codeText(i18n, (e as { code?: string }).code) ?? errorText(e, t`Network anomaly`) });
          return;
        }
        saved(i18n);
        p.onClose();
      }}
      aria-label={t`Leverage`}
      data-testid="leverage-form"
    >
      <Field name="leverage" label={t`Leverage (1 to ${max}×)`}>
        {(c) => <input className="input" inputMode="numeric" autoComplete="off" data-testid="leverage-input" {...c} {...form.register("leverage")} />}
      </Field>
      <input
        type="range"
        min={1}
        max={max}
        step={1}
        aria-label={t`Leverage`}
        value={/^\d+$/.test(value ?? "") ? value : "1"}
        onChange={(e) => form.setValue("leverage", e.target.value, { shouldValidate: true })}
      />
      <FormError />
      <SubmitButton testId="leverage-save">{t`Confirm`}</SubmitButton>
    </Form>
  );
}

function Choice<T extends string>({
  name,
  options,
  current,
  onSave,
  testId,
}: {
  name: string;
  options: { value: T; label: string; hint?: string }[];
  current?: T;
  onSave: (v: T) => Promise<void>;
  testId: string;
}) {
  const { t } = useLingui();
  const [value, setValue] = useState<T | undefined>(current ?? options[0]?.value);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      className="form"
      data-testid={testId}
      onSubmit={(e) => {
        e.preventDefault();
        if (!value) return;
        setBusy(true);
        setError(null);
        onSave(value).then(
          () => setBusy(false),
          (err: unknown) => {
            setBusy(false);
            setError(err instanceof Error ? err.message : t`Network anomaly`);
          },
        );
      }}
    >
      <fieldset className="choice">
        <legend className="visually-hidden">{name}</legend>
        {options.map((o) => (
          <label key={o.value} className="choice-option">
            <input type="radio" name={name} value={o.value} checked={value === o.value} onChange={() => setValue(o.value)} />
            <span>{o.label}</span>
            {o.hint ? <small>{o.hint}</small> : null}
          </label>
        ))}
      </fieldset>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <button type="submit" className="button button--primary" disabled={busy} aria-busy={busy}>
        {t`Confirm`}
      </button>
    </form>
  );
}

function MarginForm(p: Props) {
  const { t, i18n } = useLingui();
  const modes = (["CROSS", "ISOLATED"] as const).filter((m) => p.marginModes.length === 0 || p.marginModes.includes(m));
  return (
    <Choice<MarginMode>
      name={t`Margin mode`}
      testId="margin-form"
      current={p.marginMode}
      options={modes.map((m) => ({ value: m, label: m === "CROSS" ? t`Cross` : t`Isolated` }))}
      onSave={async (m) => {
        try {
          await tradingApi.setMarginMode({ exchange: p.exchange, symbol: p.symbol, margin_mode: m });
        } catch (e) {
          throw new Error(codeText(i18n, (e as { code?: string }).code) ?? errorText(e, t`Network anomaly`));
        }
        saved(i18n);
        p.onClose();
      }}
    />
  );
}

function PositionModeForm(p: Props) {
  const { t, i18n } = useLingui();
  return (
    <Choice<PositionModeValue>
      name={t`Position mode`}
      testId="position-mode-form"
      current={p.positionMode}
      options={[
        { value: "ONE_WAY", label: t`One-Way`, hint: t`One position per symbol: buys and sells offset each other.` },
        { value: "HEDGE", label: t`Hedge`, hint: t`A long and a short position at once: Open Long/Short and Close Long/Short.` },
      ]}
      onSave={async (m) => {
        try {
          await tradingApi.setPositionMode(p.exchange, m);
        } catch (e) {
          throw new Error(codeText(i18n, (e as { code?: string }).code) ?? errorText(e, t`Network anomaly`));
        }
        saved(i18n);
        p.onClose();
      }}
    />
  );
}

// Sound alerts (filled order, trading volume, order) and their volume, saved with the member's preferences.
function PreferencesForm(p: Props) {
  const { t, i18n } = useLingui();
  const member = useMember();
  const doc = preferencesSnapshot();
  const [on, setOn] = useState<Record<AlertKind, boolean>>({
    filled: alertOn(doc, "filled"),
    volume: alertOn(doc, "volume"),
    order: alertOn(doc, "order"),
  });
  const [volume, setVolume] = useState(String(volumeOf(doc)));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const label: Record<AlertKind, string> = { filled: t`Filled order alert`, volume: t`Trading volume alert`, order: t`Order alert` };
  return (
    <form
      className="form"
      data-testid="preferences-form"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        const alerts = Object.fromEntries((Object.keys(ALERTS) as AlertKind[]).map((k) => [ALERTS[k], on[k]]));
        // The member's document is read first when it is not loaded yet, so the save never goes nowhere.
        const ready = preferencesSnapshot() || !member ? Promise.resolve() : readPreferences(member.id);
        ready.then(() => updatePreferences({ alerts, sound_volume: volume })).then(
          () => {
            setBusy(false);
            saved(i18n);
            p.onClose();
          },
          (err: unknown) => {
            setBusy(false);
            setError(errorText(err, t`Network anomaly`));
          },
        );
      }}
    >
      <fieldset className="choice">
        <legend className="visually-hidden">{t`Sound alerts`}</legend>
        {(Object.keys(ALERTS) as AlertKind[]).map((k) => (
          <label key={k} className="choice-option">
            <input type="checkbox" checked={on[k]} onChange={(e) => setOn((m) => ({ ...m, [k]: e.target.checked }))} data-testid={`alert-${k}`} />
            <span>{label[k]}</span>
          </label>
        ))}
      </fieldset>
      <label className="field">
        <span className="field-label">{t`Sound volume`}</span>
        <input type="range" min={0} max={1} step={0.1} value={volume} onChange={(e) => setVolume(e.target.value)} data-testid="sound-volume" />
      </label>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <button type="submit" className="button button--primary" disabled={busy} aria-busy={busy}>
        {t`Confirm`}
      </button>
    </form>
  );
}
