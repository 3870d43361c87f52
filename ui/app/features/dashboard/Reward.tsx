import { Trans, useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import { Alert, Loading } from "~/features/auth/AuthLayout";
import { addDecimals, decimalString, isDecimal } from "~/lib/decimal";
import { errorText } from "~/lib/errors";
import { formatDecimal } from "~/lib/format";
import { getReferral, keys, type RewardTotal } from "./api";
import { CopyButton } from "./Profile";

// Reward (/dashboard?page=self_referral): the member's own referral code
// and share link (/regist?ref=CODE prefills the code on Register), the
// members they referred, and rewards settled and unsettled per coin. Amounts
// stay decimal strings: formatted exactly, summed with the decimal module.

export function shareLink(
  code: string,
  origin = typeof window === "undefined" ? "" : window.location.origin,
): string {
  return `${origin}/regist?ref=${encodeURIComponent(code)}`;
}

// Settled plus unsettled, exactly; "" when either is not a decimal.
export function totalOf(r: RewardTotal): string {
  return isDecimal(r.settled) && isDecimal(r.unsettled)
    ? decimalString(addDecimals(r.settled, r.unsettled))
    : "";
}

export function RewardPage() {
  const { t, i18n } = useLingui();
  const q = useQuery({ queryKey: keys.referral, queryFn: getReferral });
  const r = q.data;
  const fmt = (s: string) => formatDecimal(s, i18n.locale, 8);
  return (
    <div className="dash-stack" data-testid="dashboard-reward">
      {q.isLoading ? <Loading /> : null}
      {q.isError ? (
        <Alert>{errorText(q.error, t`Network anomaly`)}</Alert>
      ) : null}
      {r ? (
        <>
          <section className="dash-card" aria-labelledby="ref-title">
            <h2 id="ref-title">{t`Referral code`}</h2>
            <dl className="dash-fields">
              <div className="dash-field">
                <dt>{t`My referral code`}</dt>
                <dd>
                  <div className="dash-row">
                    <code
                      className="dash-value dash-code"
                      data-testid="referral-code"
                    >
                      {r.code}
                    </code>
                    <CopyButton text={r.code} label={t`Copy referral code`} />
                  </div>
                </dd>
              </div>
              <div className="dash-field">
                <dt>{t`Share link`}</dt>
                <dd>
                  <div className="dash-row">
                    <code
                      className="dash-value dash-link"
                      data-testid="referral-link"
                    >
                      {shareLink(r.code)}
                    </code>
                    <CopyButton
                      text={shareLink(r.code)}
                      label={t`Copy share link`}
                    />
                  </div>
                </dd>
              </div>
            </dl>
          </section>
          <section className="dash-card" aria-labelledby="rewards-title">
            <h2 id="rewards-title">{t`Rewards`}</h2>
            {r.totals.length === 0 ? (
              <p className="dash-muted" data-testid="rewards-empty">
                <Trans>
                  No rewards yet. You earn a share of the trading fees of the
                  members you refer.
                </Trans>
              </p>
            ) : (
              <div className="dash-table-wrap">
                <table className="dash-table" data-testid="rewards">
                  <thead>
                    <tr>
                      <th scope="col">{t`Coin`}</th>
                      <th scope="col">{t`Settled`}</th>
                      <th scope="col">{t`Unsettled`}</th>
                      <th scope="col">{t`Total`}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.totals.map((x) => (
                      <tr key={x.coin} data-coin={x.coin}>
                        <th scope="row">{x.coin}</th>
                        <td data-testid={`settled-${x.coin}`}>
                          {fmt(x.settled)}
                        </td>
                        <td data-testid={`unsettled-${x.coin}`}>
                          {fmt(x.unsettled)}
                        </td>
                        <td data-testid={`total-${x.coin}`}>
                          {fmt(totalOf(x))}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
          {r.rewards && r.rewards.length > 0 ? (
            <section className="dash-card" aria-labelledby="recent-rewards-title">
              <h2 id="recent-rewards-title">{t`Recent rewards`}</h2>
              <div className="dash-table-wrap">
                <table className="dash-table" data-testid="reward-rows">
                  <thead>
                    <tr>
                      <th scope="col">{t`Time`}</th>
                      <th scope="col">{t`Amount`}</th>
                      <th scope="col">{t`Status`}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.rewards.map((w) => (
                      <tr key={w.id} data-state={w.state}>
                        <td>
                          {i18n.date(new Date(w.created_at), {
                            dateStyle: "medium",
                            timeStyle: "short",
                          })}
                        </td>
                        <td>
                          {fmt(w.amount)} {w.coin}
                        </td>
                        <td>
                          {w.state === "settled" ? t`Settled` : t`Unsettled`}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </section>
          ) : null}
          <section className="dash-card" aria-labelledby="referees-title">
            <h2 id="referees-title">{t`Referred members`}</h2>
            {r.referees.length === 0 ? (
              <p className="dash-muted" data-testid="referees-empty">
                <Trans>Nobody signed up with your code yet.</Trans>
              </p>
            ) : (
              <ul className="dash-list" data-testid="referees">
                {r.referees.map((x, i) => (
                  <li key={i}>
                    {x.nickname || t`Member`}
                    {x.joined_at ? (
                      <span className="dash-muted">
                        {" "}
                        ·{" "}
                        {i18n.date(new Date(x.joined_at), {
                          dateStyle: "medium",
                        })}
                      </span>
                    ) : null}
                  </li>
                ))}
              </ul>
            )}
          </section>
        </>
      ) : null}
    </div>
  );
}
