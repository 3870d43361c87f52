import { Trans, useLingui } from "@lingui/react/macro";
import { Link } from "react-router";
import type { Area } from "~/api/exchange-state";
import { PageTitle } from "./PageTitle";

export function TradePlaceholder({ area, exchange, symbol }: { area: Area; exchange: string; symbol?: string }) {
  const { t } = useLingui();
  const title = area === "spot" ? t`Spot trading` : t`Futures trading`;
  const market = symbol ? `${exchange} ${symbol}` : exchange;
  return (
    <div className="page">
      <PageTitle page={title} />
      <h1>{title}</h1>
      <p className="notice" data-testid="coming-later">
        <Trans>Trading on {market} is coming in a later release.</Trans>
      </p>
      <p>
        <Link to="/" className="button">
          <Trans>Back to home</Trans>
        </Link>
      </p>
    </div>
  );
}
