import { useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import { lazy, Suspense, useState, type ReactNode } from "react";
import { Link } from "react-router";
import { queryClient } from "~/api/queries";
import { tradingQueries, type MarginMode } from "~/api/trading";
import { preferencesSnapshot } from "~/features/dashboard/sync";
import { AccountTabs } from "./AccountTabs";
import { alertFor, alertOn, playAlert, volumeOf } from "./alerts";
import { useAccountStream, type AccountStream } from "./account-stream";
import type { Exchange, Instrument, MarketType } from "./api";
import { OrderForm, type MarketQuote } from "./OrderForm";
import { TradingGate } from "./ServiceGate";
import { DEFAULT_MAX_LEVERAGE } from "./order-math";
import type { SettingsKind } from "./SettingsDialog";
import type { StreamClient } from "./stream";
import { TradeToasts } from "./toasts";

// The trading side of the trade screen for a signed-in member (loaded only
// for members): the order panel with the futures settings, and the account
// tabs under the chart. Without an account on the exchange it says why
// (broker account being set up, or a key to link).

const SettingsDialog = lazy(() => import("./SettingsDialog"));

const PROVISION_POLL_MS = 3000;

// A sound for an order or fill of the member's, when that alert is on (or unset).
function soundAlert(m: { type: string }): void {
  const kind = alertFor(m);
  if (!kind) return;
  const doc = preferencesSnapshot();
  if (alertOn(doc, kind)) playAlert(kind, volumeOf(doc));
}

export type TradingSideProps = {
  ex: Exchange;
  marketType: MarketType;
  instrument: Instrument;
  quote: MarketQuote;
  readQuote: () => MarketQuote;
  stream: StreamClient;
};

export default function TradingSide(p: TradingSideProps) {
  const { t } = useLingui();
  const [prefsOpen, setPrefsOpen] = useState(false);
  const accounts = useQuery(
    {
      ...tradingQueries.accounts(),
      // Asked again while a broker account is on its way (none yet in broker mode, or provisioning).
      refetchInterval: (q) => {
        const d = q.state.data;
        const a = d?.accounts.find((x) => x.exchange === p.ex.slug);
        return (!a && d?.broker) || a?.status === "provisioning" ? PROVISION_POLL_MS : false;
      },
    },
    queryClient,
  );
  const account = accounts.data?.accounts.find((x) => x.exchange === p.ex.slug);
  const name = p.ex.name;
  let gate: ReactNode = null;
  if (!accounts.data) {
    gate = accounts.isError ? (
      <p className="notice notice-error" role="alert">
        {t`Network anomaly`}{" "}
        <button type="button" className="button button--small" onClick={() => void accounts.refetch()}>
          {t`Refresh`}
        </button>
      </p>
    ) : (
      <p className="trade-empty" aria-busy="true">
        {t`Loading your account…`}
      </p>
    );
  } else if (!account) {
    gate = accounts.data.broker ? (
      <p className="notice" data-testid="account-state" data-state="provisioning">
        {t`Your ${name} account is being set up. Trading opens here as soon as it is ready.`}
      </p>
    ) : (
      <div className="notice" data-testid="account-state" data-state="none">
        <p>{t`To trade on ${name}, link an API key of your ${name} account.`}</p>
        <p>
          <Link to="/dashboard?page=accounts" className="button button--small">
            {t`Link an API key`}
          </Link>
        </p>
      </div>
    );
  } else if (account.status === "provisioning") {
    gate = (
      <p className="notice" data-testid="account-state" data-state="provisioning">
        {t`Your ${name} account is being set up. Trading opens here as soon as it is ready.`}
      </p>
    );
  } else if (account.status === "failed") {
    gate = (
      <div className="notice notice-error" data-testid="account-state" data-state="failed">
        <p>{t`Your ${name} account could not be set up.`}</p>
        {account.status_reason ? <p>{account.status_reason}</p> : null}
      </div>
    );
  }
  const active = account?.status === "active";
  // One private subscription for the form (balances) and the tabs (re-reads).
  const acct = useAccountStream(active ? p.stream : null, active ? p.ex.slug : null, soundAlert);
  return (
    <>
      <section className="trade-panel trade-order" aria-labelledby="order-heading" data-testid="order-panel">
        <header className="trade-panel-head">
          <h2 id="order-heading">{t`Place order`}</h2>
          <button type="button" className="button button--small" onClick={() => setPrefsOpen(true)} data-testid="trade-preferences">
            {t`Preferences`}
          </button>
        </header>
        {gate ?? (
          <TradingGate exchange={p.ex.slug} name={name}>
            <ActiveTrading {...p} acct={acct} />
          </TradingGate>
        )}
        {prefsOpen ? (
          <Suspense fallback={null}>
            <SettingsDialog
              kind="preferences"
              onClose={() => setPrefsOpen(false)}
              exchange={p.ex.slug}
              symbol={p.instrument.symbol}
              maxLeverage={DEFAULT_MAX_LEVERAGE}
              marginModes={[]}
            />
          </Suspense>
        ) : null}
      </section>
      {active ? (
        <div className="trade-account-area">
          <AccountTabs
            exchange={p.ex.slug}
            marketType={p.marketType}
            instrument={p.instrument}
            streamLive={acct.state === "live"}
            triggerTypes={p.ex.capabilities.trading.triggerPriceTypes}
          />
        </div>
      ) : null}
      <TradeToasts />
    </>
  );
}

function ActiveTrading(p: TradingSideProps & { acct: AccountStream }) {
  const { t } = useLingui();
  const swap = p.marketType === "SWAP";
  const caps = p.ex.capabilities.trading;
  const acct = p.acct;
  const lev = useQuery({ ...tradingQueries.leverage(p.ex.slug, p.instrument.symbol), enabled: swap }, queryClient);
  const hedgeable = swap && caps.positionModes.includes("HEDGE");
  const mode = useQuery({ ...tradingQueries.positionMode(p.ex.slug), enabled: hedgeable }, queryClient);
  const [open, setOpen] = useState<SettingsKind | null>(null);
  const maxLeverage = lev.data?.max_leverage || p.instrument.maxLeverage || DEFAULT_MAX_LEVERAGE;
  const marginMode: MarginMode | undefined = lev.data?.margin_mode;
  const hedge = mode.data?.mode === "HEDGE";
  if (!caps.enabled) return <p className="notice">{t`Trading is not available on this exchange.`}</p>;
  return (
    <>
      {swap ? (
        <div className="order-settings" role="group" aria-label={t`Futures settings`}>
          <button type="button" className="button button--small" onClick={() => setOpen("margin")} data-testid="margin-mode">
            {marginMode === "ISOLATED" ? t`Isolated` : marginMode === "CROSS" ? t`Cross` : t`Margin mode`}
          </button>
          <button type="button" className="button button--small" onClick={() => setOpen("leverage")} data-testid="leverage">
            {lev.data?.leverage ? `${lev.data.leverage}×` : t`Leverage`}
          </button>
          {hedgeable ? (
            <button type="button" className="button button--small" onClick={() => setOpen("position")} data-testid="position-mode">
              {mode.data ? (hedge ? t`Hedge` : t`One-Way`) : t`Position mode`}
            </button>
          ) : null}
        </div>
      ) : null}
      {acct.state === "resyncing" ? <p className="trade-stream-state">{t`Updating your account…`}</p> : null}
      <OrderForm
        exchange={p.ex.slug}
        marketType={p.marketType}
        instrument={p.instrument}
        caps={caps}
        quote={p.quote}
        readQuote={p.readQuote}
        balances={acct.balances}
        hedge={hedge}
        leverage={lev.data?.leverage}
        marginMode={marginMode}
      />
      {open ? (
        <Suspense fallback={null}>
          <SettingsDialog
            kind={open}
            onClose={() => setOpen(null)}
            exchange={p.ex.slug}
            symbol={p.instrument.symbol}
            maxLeverage={maxLeverage}
            leverage={lev.data?.leverage}
            marginMode={marginMode}
            marginModes={caps.marginModes}
            positionMode={mode.data?.mode}
          />
        </Suspense>
      ) : null}
    </>
  );
}
