import { Trans, useLingui } from "@lingui/react/macro";
import { Link } from "react-router";
import { PageTitle } from "~/components/PageTitle";

// Market Data (open interest, long/short ratio, taker volume, funding rate)
// needs the analytics API; until then the page says what will be here.
export default function MarketData() {
  const { t } = useLingui();
  return (
    <div className="page placeholder-page">
      <PageTitle page={t`Market Data`} />
      <h1>{t`Market Data`}</h1>
      <p className="notice" data-testid="placeholder">
        <Trans>
          Open interest and volume, long/short ratio, taker buy/sell volume and funding rates per exchange are coming
          in a later release.
        </Trans>
      </p>
      <p className="placeholder-actions">
        <Link to="/market" className="button">
          <Trans>View markets</Trans>
        </Link>
      </p>
    </div>
  );
}
