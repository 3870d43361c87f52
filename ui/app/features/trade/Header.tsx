import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useState } from "react";
import type { Ticker } from "./api";
import { fundingCountdown } from "./countdown";
import { fractionToPercent, signOf, stepDecimals } from "~/lib/decimal";
import { useFormat } from "~/lib/format";
import type { TickDirection } from "~/lib/tick";

type Props = {
  symbol: string;
  base: string;
  quote: string;
  futures: boolean;
  ticker: Partial<Ticker> | null;
  direction: TickDirection;
  tickSize: string;
};

export function MarketHeader(p: Props) {
  const { t } = useLingui();
  const [now, setNow] = useState(() => Date.now());
  const next = p.ticker?.nextFundingTime;
  useEffect(() => {
    if (!p.futures || !next) return;
    const id = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(id);
  }, [p.futures, next]);

  const pd = stepDecimals(p.tickSize || "0.01");
  const f = useFormat();
  const price = (s: string | undefined) => f.fixed(s, pd);
  const amount = (s: string | undefined) => f.fixed(s, 2);
  const change = p.ticker?.changePct24h;
  const changeDir = ({ [-1]: "down", 0: "flat", 1: "up" } as const)[signOf(change)];
  const funding = fractionToPercent(p.ticker?.fundingRate);
  return (
    <section className="trade-header" aria-label={t`Market summary`} data-testid="market-header">
      <div className="trade-header-symbol">
        <h1>{p.symbol}</h1>
        <span className="trade-header-kind">{p.futures ? t`Perpetual` : t`Spot`}</span>
      </div>
      <dl className="trade-stats">
        <div>
          <dt>
            <Trans>Last price</Trans>
          </dt>
          <dd className={`trade-last tick-${p.direction}`} data-testid="last-price">
            {price(p.ticker?.last)}
          </dd>
        </div>
        {p.futures && (
          <>
            <div>
              <dt>
                <Trans>Mark</Trans>
              </dt>
              <dd>{price(p.ticker?.markPrice)}</dd>
            </div>
            <div>
              <dt>
                <Trans>Index</Trans>
              </dt>
              <dd>{price(p.ticker?.indexPrice)}</dd>
            </div>
          </>
        )}
        <div>
          <dt>
            <Trans>24h change</Trans>
          </dt>
          <dd className={`tick-${changeDir}`}>{f.changePct(change)}</dd>
        </div>
        <div>
          <dt>
            <Trans>24h high</Trans>
          </dt>
          <dd>{price(p.ticker?.high24h)}</dd>
        </div>
        <div>
          <dt>
            <Trans>24h low</Trans>
          </dt>
          <dd>{price(p.ticker?.low24h)}</dd>
        </div>
        <div>
          <dt>{t`24h volume (${p.base})`}</dt>
          <dd>{amount(p.ticker?.volume24h)}</dd>
        </div>
        <div>
          <dt>{t`24h volume (${p.quote})`}</dt>
          <dd>{amount(p.ticker?.quoteVolume24h)}</dd>
        </div>
        {p.futures && (
          <div>
            <dt>
              <Trans>Funding / countdown</Trans>
            </dt>
            <dd data-testid="funding">
              <span className={funding && funding.startsWith("-") ? "tick-down" : "tick-up"}>{funding ? `${funding}%` : "—"}</span>{" "}
              <span data-testid="funding-countdown">{fundingCountdown(next, now)}</span>
            </dd>
          </div>
        )}
      </dl>
    </section>
  );
}
