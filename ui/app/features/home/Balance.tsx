import { Trans, useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link } from "react-router";
import type { components } from "~/api/queries";
import { queryOptionsFor } from "~/api/queries";
import { preferencesSnapshot, updatePreferences, usePreferencesStatus } from "~/features/dashboard/sync";
import type { PreferencesDoc } from "~/features/dashboard/api";
import { isDecimal, signOf } from "~/lib/decimal";
import { useExchanges } from "~/lib/exchanges";
import { formatChangePct, formatFixed } from "~/lib/format";
import { useMember } from "~/lib/session";
import { readStored, writeStored } from "~/preferences";
import "./home.css";

// The signed-in home's balance card, beside the movers: the estimated
// balance in USDT across exchanges and today's change since 00:00 UTC,
// realized and unrealized, from GET /api/v1/home/summary (the BFF sums them
// exactly from the wallet overview's valuation, the day's fills and funding
// payments and the open positions). The eye masks the figures; the choice is
// kept in this browser and in the member's preferences (hide_balances).

export type HomeSummary = components["schemas"]["HomeSummary"];

const REFRESH_MS = 30_000;

// This browser's copy of the eye's state ("1": hidden).
export const HIDE_BALANCES_KEY = "exhub.hideBalances";

// The preferences document with the eye (the BFF's hide_balances).
type Prefs = PreferencesDoc & { hide_balances?: boolean };

function storedHidden(): boolean {
  const doc = preferencesSnapshot() as Prefs | null;
  if (doc && typeof doc.hide_balances === "boolean") return doc.hide_balances;
  if (doc) return false; // saved preferences without the key: shown
  return readStored(HIDE_BALANCES_KEY) === "1";
}

// The eye's state: this browser's until the member's preferences are read,
// then theirs; a change is written to both.
export function useHiddenBalances(memberId: string | null): [boolean, (hidden: boolean) => void] {
  const status = usePreferencesStatus(memberId);
  const [hidden, setHidden] = useState(storedHidden);
  useEffect(() => {
    if (status === "ready") setHidden(storedHidden());
  }, [status]);
  const set = (next: boolean) => {
    setHidden(next);
    writeStored(HIDE_BALANCES_KEY, next ? "1" : "0");
    void updatePreferences({ hide_balances: next } as Prefs).catch(() => undefined);
  };
  return [hidden, set];
}

const MASK = "******";

function EyeIcon({ open }: { open: boolean }) {
  return (
    <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
      <path
        d="M2 12s3.6-7 10-7 10 7 10 7-3.6 7-10 7S2 12 2 12z"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.8"
        strokeLinejoin="round"
      />
      <circle cx="12" cy="12" r="3" fill="none" stroke="currentColor" strokeWidth="1.8" />
      {!open && <path d="M4 4l16 16" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />}
    </svg>
  );
}

export function HomeBalance() {
  const member = useMember();
  const { t, i18n } = useLingui();
  const exchanges = useExchanges();
  const [hidden, setHidden] = useHiddenBalances(member?.id ?? null);
  const summary = useQuery({
    ...queryOptionsFor("get", "/api/v1/home/summary", {}),
    enabled: member !== null,
    refetchInterval: REFRESH_MS,
  });
  if (!member) return null;
  const s = summary.data;
  const usdt = (v: string) => (hidden ? MASK : formatFixed(v, 2, i18n.locale));
  const signed = (v: string) => (hidden ? MASK : signOf(v) > 0 ? `+${usdt(v)}` : usdt(v));
  const cls = (v: string) => (hidden ? "" : ({ [-1]: "down", 0: "flat", 1: "up" } as const)[signOf(v)]);
  const name = (slug: string) => exchanges?.find((e) => e.slug === slug)?.name ?? slug;
  const failed = (s?.exchanges ?? []).filter((e) => e.status === "error").map((e) => name(e.exchange));
  const names = failed.join(", ");
  return (
    <section className="home-balance" aria-labelledby="home-balance-title" data-testid="home-balance">
      <div className="home-balance-head">
        <h2 id="home-balance-title" className="home-balance-title">
          <Trans>Estimated balance</Trans>
        </h2>
        <button
          type="button"
          className="home-balance-eye"
          aria-pressed={hidden}
          aria-label={hidden ? t`Show balances` : t`Hide balances`}
          title={hidden ? t`Show balances` : t`Hide balances`}
          onClick={() => setHidden(!hidden)}
          data-testid="home-balance-eye"
        >
          <EyeIcon open={!hidden} />
        </button>
      </div>
      {summary.isError && !s ? (
        <p className="notice notice--error home-balance-error" role="alert">
          <Trans>Network anomaly</Trans>{" "}
          <button type="button" className="button" onClick={() => void summary.refetch()}>
            <Trans>Refresh</Trans>
          </button>
        </p>
      ) : !s || !isDecimal(s.total_usdt) ? (
        <p className="home-balance-value home-balance-value--loading" aria-busy="true" />
      ) : (
        <>
          <p className="home-balance-value num" data-testid="home-balance-total">
            {usdt(s.total_usdt)} <span className="home-balance-unit">USDT</span>
          </p>
          <p className="home-balance-today">
            <span className="home-balance-label">
              <Trans>Today's change (since 00:00 UTC)</Trans>
            </span>{" "}
            <span className={`num ${cls(s.change)}`} data-testid="home-balance-change">
              {signed(s.change)} USDT
              {s.change_pct && !hidden ? ` (${formatChangePct(s.change_pct, i18n.locale)})` : ""}
            </span>
          </p>
          <dl className="home-balance-split">
            <div>
              <dt>
                <Trans>Realized</Trans>
              </dt>
              <dd className={`num ${cls(s.realized)}`} data-testid="home-balance-realized">
                {signed(s.realized)} USDT
              </dd>
            </div>
            <div>
              <dt>
                <Trans>Unrealized</Trans>
              </dt>
              <dd className={`num ${cls(s.unrealized)}`} data-testid="home-balance-unrealized">
                {signed(s.unrealized)} USDT
              </dd>
            </div>
          </dl>
          {failed.length > 0 && (
            <p className="home-balance-note" role="status" data-testid="home-balance-failed">
              {t`Some figures of ${names} could not be read right now.`}
            </p>
          )}
        </>
      )}
      <p className="home-balance-actions">
        <Link to="/wallet?page=deposit" className="button button--primary">
          <Trans>Deposit</Trans>
        </Link>
        <Link to="/wallet?page=overview" className="button">
          <Trans>Wallet</Trans>
        </Link>
      </p>
    </section>
  );
}

export default HomeBalance;
