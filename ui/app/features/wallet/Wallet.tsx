import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect } from "react";
import { Link, useSearchParams } from "react-router";
import { SUBPAGE_KEYS } from "~/components/Nav";
import { PageTitle } from "~/components/PageTitle";
import "~/features/auth/auth.css";
import { Loading } from "~/features/auth/AuthLayout";
import "~/features/dashboard/dashboard.css";
import { preferencesSnapshot, rememberSubPage, usePreferencesStatus } from "~/features/dashboard/sync";
import { useMe } from "~/lib/session";
import { readStored } from "~/preferences";
import { DepositPage } from "./Deposit";
import { OverviewPage } from "./Overview";
import { ConvertPage, ExchangePage, GiftPage, TransferPage, WithdrawPage } from "./Movements";
import { chooseSubPage, isSubPage, SUB_PAGES, type SubPage } from "./wallet-math";
import "./wallet.css";

// /wallet: Wallet Overview, Deposit, Withdraw, Convert, Transfer, Exchange and Gift (the spec's menu), chosen by
// ?page= or ?tab= (the top bar's Deposit button opens ?page=deposit). Without one the last sub-page opened is shown (kept in
// this browser and in the member's preferences, sub_pages.wallet).

export function useSubPageLabels(): Record<SubPage, string> {
  const { t } = useLingui();
  return {
    overview: t`Wallet Overview`,
    deposit: t`Deposit`,
    withdraw: t`Withdraw`,
    convert: t`Convert`,
    transfer: t`Transfer`,
    exchange: t`Exchange`,
    gift: t`Gift`,
  };
}

export function WalletScreen() {
  const { t } = useLingui();
  const [params] = useSearchParams();
  const me = useMe();
  const status = usePreferencesStatus(me.status === "member" ? me.member.id : null);
  const remembered = preferencesSnapshot()?.sub_pages?.wallet ?? readStored(SUBPAGE_KEYS.wallet);
  // ?tab= is the same (the trade screen's insufficient-balance toast links /wallet?tab=deposit and ?tab=transfer).
  const asked = params.get("page") ?? params.get("tab");
  const page = chooseSubPage(asked, remembered);
  const explicit = isSubPage(asked);
  // Without ?page=, a member's remembered sub-page comes from the server: wait for the preferences first.
  const waiting =
    !explicit &&
    (me.status === "unknown" ||
      me.status === "loading" ||
      (me.status === "member" && (status === "none" || status === "loading")));
  const labels = useSubPageLabels();

  useEffect(() => {
    if (!waiting && remembered !== page) rememberSubPage("wallet", page);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [page, waiting, status]);

  return (
    <div className="page dash-page wallet-page" data-testid="wallet">
      <PageTitle page={`${t`Wallet`} - ${labels[page]}`} />
      <h1>
        <Trans>Wallet</Trans>
      </h1>
      <nav className="dash-tabs" aria-label={t`Wallet`}>
        {SUB_PAGES.map((p) => (
          <Link
            key={p}
            to={`/wallet?page=${p}`}
            aria-current={p === page ? "page" : undefined}
            data-testid={`wallet-tab-${p}`}
          >
            {labels[p]}
          </Link>
        ))}
      </nav>
      {waiting ? <Loading /> : null}
      {!waiting && page === "overview" ? <OverviewPage /> : null}
      {!waiting && page === "deposit" ? <DepositPage /> : null}
      {!waiting && page === "withdraw" ? <WithdrawPage /> : null}
      {!waiting && page === "convert" ? <ConvertPage /> : null}
      {!waiting && page === "transfer" ? <TransferPage /> : null}
      {!waiting && page === "exchange" ? <ExchangePage /> : null}
      {!waiting && page === "gift" ? <GiftPage /> : null}
    </div>
  );
}
