import { Trans, useLingui } from "@lingui/react/macro";
import { useQueries, useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { queryOptionsFor } from "~/api/queries";
import { addDecimals, dec, decimalString, isDecimal, signOf } from "~/lib/decimal";
import { formatChangePct, formatFixed } from "~/lib/format";
import { useMember } from "~/lib/session";
import "./home.css";

// The signed-in home's balance card, beside the movers: the estimated
// balance in USDT across exchanges (GET /api/v1/wallet/overview) and today's
// change since the UTC day start: the realized PnL of today (GET
// /api/v1/history/rpnl from 00:00 UTC, fills and funding) plus the
// unrealized PnL of the open positions now (GET /api/v1/positions per
// exchange). Every sum is exact (big.js on decimal strings).

const REFRESH_MS = 10_000;

// The start of the UTC day of t, in Unix ms.
export function utcDayStart(t: number): number {
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

// Today's change and its percentage of the balance at the day's start (the
// balance now minus the change); pct is null when that start balance is not
// positive.
export function todayChange(
  balance: string,
  realized: string,
  unrealized: string[],
): { change: string; pct: string | null } {
  let change = dec(isDecimal(realized) ? realized : "0");
  for (const u of unrealized) if (isDecimal(u)) change = addDecimals(change, u);
  const start = dec(balance).minus(change);
  const pct = start.gt(0) ? decimalString(change.times(100).div(start)) : null;
  return { change: decimalString(change), pct };
}

function useBalance(enabled: boolean) {
  const now = Date.now();
  const from = utcDayStart(now);
  const overview = useQuery({
    ...queryOptionsFor("get", "/api/v1/wallet/overview", {}),
    enabled,
    refetchInterval: REFRESH_MS,
  });
  // The window ends at the next whole minute, so repeated renders share one request.
  const to = Math.ceil(now / 60_000) * 60_000;
  const rpnl = useQuery({
    ...queryOptionsFor("get", "/api/v1/history/rpnl", { params: { query: { from, to } } }),
    enabled,
    refetchInterval: REFRESH_MS * 6,
  });
  const exchanges = (overview.data?.exchanges ?? []).filter((e) => e.status === "ok").map((e) => e.exchange);
  const positions = useQueries({
    queries: exchanges.map((exchange) => ({
      ...queryOptionsFor("get", "/api/v1/positions", { params: { query: { exchange } } }),
      enabled,
      refetchInterval: REFRESH_MS,
    })),
  });
  return { overview, rpnl, positions };
}

export function HomeBalance() {
  const member = useMember();
  const { t, i18n } = useLingui();
  const { overview, rpnl, positions } = useBalance(member !== null);
  if (!member) return null;
  const total = overview.data?.total_usdt;
  const unrealized = positions.flatMap((q) => (q.data?.positions ?? []).map((p) => p.unrealized_pnl ?? ""));
  const ready = isDecimal(total) && rpnl.data !== undefined && positions.every((q) => !q.isPending);
  const today = ready ? todayChange(total, rpnl.data!.total_rpnl, unrealized) : null;
  const cls = today ? ({ [-1]: "down", 0: "flat", 1: "up" } as const)[signOf(today.change)] : "";
  const usdt = (s: string) => formatFixed(s, 2, i18n.locale);
  const signed = (s: string) => (signOf(s) > 0 ? `+${usdt(s)}` : usdt(s));
  return (
    <section className="home-balance" aria-labelledby="home-balance-title" data-testid="home-balance">
      <h2 id="home-balance-title" className="home-balance-title">
        <Trans>Estimated balance</Trans>
      </h2>
      {overview.isError ? (
        <p className="notice notice--error" role="alert">
          <Trans>Network anomaly</Trans>
        </p>
      ) : !isDecimal(total) ? (
        <p className="home-balance-value home-balance-value--loading" aria-busy="true" />
      ) : (
        <p className="home-balance-value num" data-testid="home-balance-total">
          {usdt(total)} <span className="home-balance-unit">USDT</span>
        </p>
      )}
      <p className="home-balance-today">
        <span className="home-balance-label">
          <Trans>Today's change (since 00:00 UTC)</Trans>
        </span>{" "}
        {today ? (
          <span className={`num ${cls}`} data-testid="home-balance-change">
            {signed(today.change)} USDT
            {today.pct !== null ? ` (${formatChangePct(today.pct, i18n.locale)})` : ""}
          </span>
        ) : rpnl.isError ? (
          <span className="home-balance-label">{t`Not available right now`}</span>
        ) : (
          <span className="home-balance-label" aria-busy="true">
            …
          </span>
        )}
      </p>
      <p className="home-balance-actions">
        <Link to="/wallet?page=overview" className="button">
          <Trans>Wallet</Trans>
        </Link>
        <Link to="/wallet?page=deposit" className="button button--primary">
          <Trans>Deposit</Trans>
        </Link>
      </p>
    </section>
  );
}
