import { Trans, useLingui } from "@lingui/react/macro";
import { Link, useLocation } from "react-router";
import { PageTitle } from "./PageTitle";

// The translated page name of a path's first segment, for pages that do
// not set their own title yet.
export function usePageName(): (segment: string) => string | null {
  const { t } = useLingui();
  const names: Record<string, string> = {
    login: t`Log In`,
    regist: t`Sign Up`,
    forgotPassword_A: t`Forgot password`,
    forgotPassword_B: t`Reset password`,
    otp: t`Verification code`,
    otpauth: t`Two-factor authentication`,
    bindPsd: t`Set password`,
    about: t`About us`,
    event: t`Events`,
    eventDetail: t`Event details`,
    dashboard: t`Dashboard`,
    wallet: t`Wallet`,
    history: t`History`,
    marketData: t`Market Data`,
  };
  return (segment) => names[segment] ?? null;
}

// A page that a later release fills: its title, a short note and a way back.
export function PagePlaceholder() {
  const { pathname } = useLocation();
  const name = usePageName();
  const { t } = useLingui();
  const segment = pathname.split("/")[1] ?? "";
  const title = name(segment) ?? t`Page`;
  return (
    <div className="page placeholder-page">
      <PageTitle page={title} />
      <h1>{title}</h1>
      <p className="notice" data-testid="placeholder">
        <Trans>This page is coming in a later release.</Trans>
      </p>
      <p className="placeholder-actions">
        <Link to="/" className="button">
          <Trans>Back to home</Trans>
        </Link>
        <Link to="/market" className="button">
          <Trans>View markets</Trans>
        </Link>
      </p>
    </div>
  );
}
