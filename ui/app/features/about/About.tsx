import { Trans, useLingui } from "@lingui/react/macro";
import { Link } from "react-router";
import { ExchangeList, ExchangeListLoading } from "~/components/ExchangeList";
import { PageTitle } from "~/components/PageTitle";
import { links } from "~/lib/links";
import { useExchanges } from "~/lib/exchanges";

// /about: what exhub is, the exchanges this deployment connects (live from the exchange list) and where the
// project's documentation, releases and source live.
export function AboutPage() {
  const { t } = useLingui();
  const exchanges = useExchanges();
  return (
    <div className="page about-page" data-testid="about-page">
      <PageTitle page={t`About us`} />
      <h1>
        <Trans>About exhub</Trans>
      </h1>
      <p>
        <Trans>
          exhub is an open-source hub for trading spot markets and USDT-margined perpetual futures on several
          exchanges from one screen: markets, charts, order books and derivatives analytics side by side, one wallet
          view across exchanges, and every order and money movement recorded before it is sent.
        </Trans>
      </p>
      <h2>
        <Trans>Exchanges</Trans>
      </h2>
      {exchanges === null ? <ExchangeListLoading /> : <ExchangeList exchanges={exchanges} />}
      <h2>
        <Trans>Explore</Trans>
      </h2>
      <ul className="about-links">
        <li>
          <Link to="/market">
            <Trans>Markets</Trans>
          </Link>
        </li>
        <li>
          <Link to="/marketData">
            <Trans>Market Data</Trans>
          </Link>
        </li>
        <li>
          <Link to="/event">
            <Trans>Events</Trans>
          </Link>
        </li>
        <li>
          <a href={links.helpCenter} target="_blank" rel="noopener noreferrer">
            <Trans>Help Center</Trans>
          </a>
        </li>
        <li>
          <a href={links.announcement} target="_blank" rel="noopener noreferrer">
            <Trans>Announcement</Trans>
          </a>
        </li>
        <li>
          <a href={links.home} target="_blank" rel="noopener noreferrer">
            <Trans>Source code</Trans>
          </a>
        </li>
      </ul>
    </div>
  );
}
