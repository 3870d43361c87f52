import { Trans, useLingui } from "@lingui/react/macro";
import type { Instrument } from "./api";

// The instrument's trading rules (the order form checks them before sending).
export function RulesPanel({ instrument, futures, fixToCoin }: { instrument: Instrument; futures: boolean; fixToCoin: boolean }) {
  const { t } = useLingui();
  const i = instrument;
  const rows: [string, string][] = [
    [t`Tick size`, i.tickSize],
    [t`Size step (${i.base})`, i.stepSize],
    [t`Minimum size (${i.base})`, i.minQty],
    [t`Maximum size (${i.base})`, i.maxQty],
  ];
  if (i.minNotional) rows.push([t`Minimum order value (${i.quote})`, i.minNotional]);
  if (futures) {
    rows.push([t`Maximum leverage`, i.maxLeverage ? `${i.maxLeverage}×` : "5×"]);
    if (i.contractValue && i.contractValue !== "1") rows.push([t`Contract value (${i.contractValueAsset || i.base})`, i.contractValue]);
  }
  return (
    <section className="trade-panel trade-rules" aria-labelledby="rules-heading">
      <header className="trade-panel-head">
        <h2 id="rules-heading">
          <Trans>Trading rules</Trans>
        </h2>
      </header>
      <dl className="rules" data-testid="rules">
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v || "—"}</dd>
          </div>
        ))}
      </dl>
      {fixToCoin && (
        <p className="trade-note">
          <Trans>Sizes are shown in {i.base}, not in contracts.</Trans>
        </p>
      )}
    </section>
  );
}
