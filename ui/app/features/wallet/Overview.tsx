import { Trans, useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Link } from "react-router";
import { errorText } from "~/lib/errors";
import { compareDecimals } from "~/lib/decimal";
import { formatDecimal } from "~/lib/format";
import { readStored, writeStored } from "~/preferences";
import { walletQueries, type CoinBalance, type ExchangeBalances, type WalletBalances } from "./api";
import { exchangeName, useWalletExchanges, WalletTable, type Column } from "./parts";
import { isSmall } from "./wallet-math";

// Wallet Overview: the funding and trading wallets of every exchange, each coin with its USDT estimate, the
// per-exchange totals and the total across exchanges (which no single exchange shows). Hiding small balances
// (under 1 USDT) is remembered in this browser.

export const HIDE_SMALL_KEY = "exhub.wallet.hideSmall";

function useUsdt(): (s: string | undefined) => string {
  const { i18n } = useLingui();
  return (s) => formatDecimal(s, i18n.locale, 2, 2);
}

function WalletCard({ w, exchange, hideSmall }: { w: WalletBalances; exchange: string; hideSmall: boolean }) {
  const { t, i18n } = useLingui();
  const usdt = useUsdt();
  const amount = (s: string) => formatDecimal(s, i18n.locale, 8);
  const title = w.wallet === "funding" ? t`Funding wallet` : t`Trading wallet`;
  const rows = hideSmall ? w.coins.filter((c) => !isSmall(c)) : w.coins;
  const columns: Column<CoinBalance>[] = [
    { id: "coin", header: t`Coin`, cell: (c) => <strong>{c.coin}</strong>, sort: (a, b) => a.coin.localeCompare(b.coin) },
    { id: "available", header: t`Available`, cell: (c) => amount(c.available), numeric: true, sort: (a, b) => compareDecimals(a.available, b.available) },
    { id: "frozen", header: t`Frozen`, cell: (c) => amount(c.frozen), numeric: true, sort: (a, b) => compareDecimals(a.frozen, b.frozen) },
    { id: "total", header: t`Total`, cell: (c) => amount(c.total), numeric: true, sort: (a, b) => compareDecimals(a.total, b.total) },
    {
      id: "usdt",
      header: t`Value (USDT)`,
      cell: (c) => (c.usdt_value ? <span title={c.usdt_value}>≈ {usdt(c.usdt_value)}</span> : <span title={t`No USDT price on this exchange`}>—</span>),
      numeric: true,
      sort: (a, b) => compareDecimals(a.usdt_value, b.usdt_value),
    },
  ];
  return (
    <div className="wallet-wallet" data-testid={`overview-${exchange}-${w.wallet}`}>
      <h3>
        {title} <span className="wallet-sub">≈ {usdt(w.total_usdt)} USDT</span>
      </h3>
      <WalletTable label={title} rows={rows} columns={columns} rowId={(c) => c.coin} empty={t`No balances.`} />
    </div>
  );
}

function ExchangeCard({ e, name, hideSmall }: { e: ExchangeBalances; name: string; hideSmall: boolean }) {
  const usdt = useUsdt();
  return (
    <section className="dash-card" aria-label={name} data-testid={`overview-${e.exchange}`}>
      <h2 className="wallet-exchange-head">
        <span>{name}</span>
        {e.status === "ok" ? (
          <span className="wallet-sub" data-testid={`overview-${e.exchange}-total`}>
            ≈ {usdt(e.total_usdt)} USDT
          </span>
        ) : null}
      </h2>
      {e.status === "no_account" ? (
        <p className="auth-hint">
          <Trans>
            You have no account on this exchange yet. <Link to="/dashboard?page=accounts">Exchange accounts</Link>
          </Trans>
        </p>
      ) : null}
      {e.status === "error" ? (
        <p className="wallet-error" role="alert">
          <Trans>The balances of this exchange could not be read right now.</Trans> {e.error?.detail}
        </p>
      ) : null}
      {e.status === "ok" ? e.wallets.map((w) => <WalletCard key={w.wallet} w={w} exchange={e.exchange} hideSmall={hideSmall} />) : null}
      {e.status === "ok" && e.unpriced.length > 0 ? (
        <p className="auth-hint">
          <Trans>Not in the estimate (no USDT price): {e.unpriced.join(", ")}</Trans>
        </p>
      ) : null}
    </section>
  );
}

export function OverviewPage() {
  const { t } = useLingui();
  const q = useQuery({ ...walletQueries.overview(), refetchInterval: 30_000 });
  const exchanges = useWalletExchanges();
  const [hideSmall, setHideSmall] = useState(() => readStored(HIDE_SMALL_KEY) === "1");
  const hideId = useId();
  const usdt = useUsdt();
  return (
    <div className="dash-stack" data-testid="wallet-overview">
      <section className="dash-card wallet-total">
        <h2>
          <Trans>Estimated total balance</Trans>
        </h2>
        <p className="wallet-big" data-testid="overview-total">
          {q.data ? `≈ ${usdt(q.data.total_usdt)} USDT` : "—"}
        </p>
        <p className="auth-hint">
          <Trans>Across every exchange: funding and trading wallets, valued at each exchange's last price.</Trans>
        </p>
        <div className="wallet-check">
          <input
            id={hideId}
            type="checkbox"
            checked={hideSmall}
            data-testid="hide-small"
            onChange={(e) => {
              setHideSmall(e.target.checked);
              writeStored(HIDE_SMALL_KEY, e.target.checked ? "1" : "0");
            }}
          />
          <label htmlFor={hideId}>
            <Trans>Hide small balances (under 1 USDT)</Trans>
          </label>
        </div>
      </section>
      {q.isPending ? (
        <p className="auth-hint" aria-busy="true">
          <Trans>Loading…</Trans>
        </p>
      ) : null}
      {q.isError ? (
        <p className="wallet-error" role="alert">
          {errorText(q.error, t`Network anomaly`)}{" "}
          <button type="button" className="button" onClick={() => void q.refetch()}>
            <Trans>Retry</Trans>
          </button>
        </p>
      ) : null}
      {q.data?.exchanges.map((e) => (
        <ExchangeCard key={e.exchange} e={e} name={exchangeName(exchanges, e.exchange)} hideSmall={hideSmall} />
      ))}
    </div>
  );
}
