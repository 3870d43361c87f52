import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect } from "react";
import { Link, useLocation, useSearchParams } from "react-router";
import { PageTitle } from "~/components/PageTitle";
import { SUBPAGE_KEYS } from "~/components/Nav";
import "~/features/auth/auth.css";
import { Loading } from "~/features/auth/AuthLayout";
import { useMe } from "~/lib/session";
import { readStored } from "~/preferences";
import "./dashboard.css";
import { AccountsPage } from "./Accounts";
import { ProfilePage } from "./Profile";
import { RewardPage } from "./Reward";
import { SecurityPage } from "./Security";
import {
  preferencesSnapshot,
  rememberSubPage,
  usePreferencesStatus,
} from "./sync";

// /dashboard: Profile, Security, Exchange accounts and Reward (the spec's
// sub-pages profile, security, self_referral, and accounts), chosen by ?page=. Without one the last sub-page
// opened is shown (kept in this browser and in the member's preferences).
// Kratos' settings UI URL, /dashboard/security, is the Security sub-page.

export const SUB_PAGES = ["profile", "security", "accounts", "self_referral"] as const;
export type SubPage = (typeof SUB_PAGES)[number];

export function isSubPage(v: unknown): v is SubPage {
  return typeof v === "string" && (SUB_PAGES as readonly string[]).includes(v);
}

export function chooseSubPage(
  pathname: string,
  param: string | null,
  remembered: string | null | undefined,
): SubPage {
  if (pathname.replace(/\/+$/, "") === "/dashboard/security") return "security";
  if (isSubPage(param)) return param;
  if (isSubPage(remembered)) return remembered;
  return "profile";
}

export function DashboardScreen() {
  const { t } = useLingui();
  const { pathname } = useLocation();
  const [params] = useSearchParams();
  const me = useMe();
  const status = usePreferencesStatus(
    me.status === "member" ? me.member.id : null,
  );
  const remembered =
    preferencesSnapshot()?.sub_pages?.dashboard ??
    readStored(SUBPAGE_KEYS.dashboard);
  const page = chooseSubPage(pathname, params.get("page"), remembered);
  // Without ?page=, a signed-in member's remembered sub-page comes from the
  // server: wait for the preferences (read at sign-in) before choosing.
  const explicit =
    isSubPage(params.get("page")) || pathname.startsWith("/dashboard/security");
  const waiting =
    !explicit &&
    (me.status === "unknown" ||
      me.status === "loading" ||
      (me.status === "member" && (status === "none" || status === "loading")));
  const labels: Record<SubPage, string> = {
    profile: t`Profile`,
    security: t`Security`,
    accounts: t`Exchange accounts`,
    self_referral: t`Reward`,
  };

  // Again once the member's preferences are read: a page opened by its URL
  // before then was only remembered in this browser (nothing to write to yet).
  useEffect(() => {
    if (!waiting && remembered !== page) rememberSubPage("dashboard", page);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [page, waiting, status]);

  return (
    <div className="page dash-page" data-testid="dashboard">
      <PageTitle page={`${t`Dashboard`} - ${labels[page]}`} />
      <h1>
        <Trans>Dashboard</Trans>
      </h1>
      <nav className="dash-tabs" aria-label={t`Dashboard`}>
        {SUB_PAGES.map((p) => (
          <Link
            key={p}
            to={`/dashboard?page=${p}`}
            aria-current={p === page ? "page" : undefined}
            data-testid={`dash-tab-${p}`}
          >
            {labels[p]}
          </Link>
        ))}
      </nav>
      {waiting ? <Loading /> : null}
      {!waiting && page === "profile" ? <ProfilePage /> : null}
      {!waiting && page === "security" ? <SecurityPage /> : null}
      {!waiting && page === "accounts" ? <AccountsPage /> : null}
      {!waiting && page === "self_referral" ? <RewardPage /> : null}
    </div>
  );
}
