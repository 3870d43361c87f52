import { Trans, useLingui } from "@lingui/react/macro";
import { Link, useRevalidator } from "react-router";
import type { Exchange } from "~/api/client";
import { areaOf, displayState, logoSrc, safeWebsite, type Area, type DisplayState } from "~/api/exchange-state";

function useLabels() {
  const { t } = useLingui();
  const state: Record<DisplayState, string> = {
    available: t`Available`,
    coming_soon: t`Coming soon`,
    maintenance: t`Maintenance`,
    starting: t`Starting`,
    unavailable: t`Unavailable`,
  };
  const area: Record<Area, string> = { spot: t`Spot`, futures: t`Futures` };
  return { state, area };
}

export function ExchangeList({ exchanges }: { exchanges: Exchange[] }) {
  if (exchanges.length === 0) {
    return (
      <p className="notice" role="status">
        <Trans>No exchanges are available yet.</Trans>
      </p>
    );
  }
  return (
    <ul className="exchange-list" data-testid="exchange-list">
      {exchanges.map((ex) => (
        <ExchangeCard key={ex.key} exchange={ex} />
      ))}
    </ul>
  );
}

function ExchangeCard({ exchange: ex }: { exchange: Exchange }) {
  const labels = useLabels();
  const state = displayState(ex);
  const src = logoSrc(ex.logoSvg);
  const website = safeWebsite(ex.website);
  const headingId = `exchange-${ex.key}`;
  const version = ex.pluginVersion;
  const areas = (ex.marketTypes ?? []).map(areaOf).filter((a): a is Area => a !== null);
  return (
    <li className="exchange-card" data-state={state} data-slug={ex.slug} aria-labelledby={headingId}>
      <div className="exchange-head">
        {src ? (
          <img className="exchange-logo" src={src} alt="" width={40} height={40} />
        ) : (
          <span className="exchange-logo exchange-logo--empty" aria-hidden="true">
            {ex.name.slice(0, 1)}
          </span>
        )}
        <h2 id={headingId} className="exchange-name">
          {ex.name}
        </h2>
        <span className={`badge badge--${state}`} data-testid="status-badge">
          {labels.state[state]}
        </span>
      </div>
      <ul className="market-entries">
        {areas.map((area) => (
          <li key={area}>
            {state === "available" ? (
              <Link className="entry" to={`/${area}/${encodeURIComponent(ex.slug)}`}>
                {labels.area[area]}
              </Link>
            ) : (
              // Not a link: an exchange that is not open for trading has
              // entries that do nothing.
              <span className="entry entry--disabled" aria-disabled="true">
                {labels.area[area]}
              </span>
            )}
          </li>
        ))}
      </ul>
      <div className="exchange-meta">
        {version ? (
          <span>
            <Trans>Plugin {version}</Trans>
          </span>
        ) : null}
        {website ? (
          <a href={website} target="_blank" rel="noopener noreferrer">
            <Trans>Website</Trans>
          </a>
        ) : null}
      </div>
    </li>
  );
}

export function ExchangeListLoading() {
  return (
    <div className="exchange-list-loading" aria-busy="true">
      <p className="visually-hidden" role="status">
        <Trans>Loading exchanges…</Trans>
      </p>
      <ul className="exchange-list" aria-hidden="true">
        {[0, 1, 2].map((i) => (
          <li key={i} className="exchange-card exchange-card--skeleton" />
        ))}
      </ul>
    </div>
  );
}

export function ExchangeListError() {
  const revalidator = useRevalidator();
  const busy = revalidator.state === "loading";
  return (
    <div className="notice notice--error" role="alert" data-testid="exchange-list-error">
      <p className="notice-title">
        <Trans>Network anomaly</Trans>
      </p>
      <p>
        <Trans>The exchange list could not be loaded. Check your connection and try again.</Trans>
      </p>
      <button type="button" className="button" onClick={() => void revalidator.revalidate()} disabled={busy}>
        {busy ? <Trans>Retrying…</Trans> : <Trans>Retry</Trans>}
      </button>
    </div>
  );
}
