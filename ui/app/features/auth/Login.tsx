import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { loadMe } from "~/lib/session";
import { Alert, AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { csrfToken, Messages } from "./FlowForm";
import { flowMessages, submitFlow, type FlowResult } from "./kratos";
import { safeReturnTo } from "./return-to";
import { showToast } from "./toast";
import { useFlow } from "./useFlow";

// After a successful first factor: the second factor when the member has
// 2FA, else the page that sent them here.
export async function afterSignIn(
  navigate: (to: string, o?: { replace?: boolean }) => void | Promise<void>,
  returnTo: string,
  succeeded: string,
): Promise<void> {
  const me = await loadMe({ force: true });
  if (me.status === "aal2_required") {
    await navigate(`/otpauth${returnTo !== "/" ? `?return_to=${encodeURIComponent(returnTo)}` : ""}`, { replace: true });
    return;
  }
  showToast(succeeded);
  await navigate(returnTo, { replace: true });
}

export function LoginScreen() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const returnTo = safeReturnTo(params.get("return_to"));
  const { state, recover } = useFlow("login");
  const [identifier, setIdentifier] = useState("");
  const [password, setPassword] = useState("");
  const [remember, setRemember] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<FlowResult | null>(null);
  const [missing, setMissing] = useState(false);

  // Already signed in: straight back.
  const signedIn = state.status === "failed" && state.result.kind === "signed_in";
  useEffect(() => {
    if (signedIn) void navigate(returnTo, { replace: true });
  }, [signedIn, navigate, returnTo]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (state.status !== "ready") return;
    if (identifier.trim() === "" || password === "") {
      setMissing(true);
      return;
    }
    setMissing(false);
    setBusy(true);
    setResult(null);
    const r = await submitFlow(
      "login",
      state.flow.id,
      { method: "password", identifier: identifier.trim(), password, csrf_token: csrfToken(state.flow) },
      { remember },
    );
    setBusy(false);
    if (r.kind === "success") {
      await afterSignIn(navigate, returnTo, t`Login succeeded!`);
      return;
    }
    // Kratos sends a member with 2FA to the second-factor step.
    if (r.kind === "redirect" && /aal=aal2/.test(r.to)) {
      await navigate(`/otpauth?return_to=${encodeURIComponent(returnTo)}`, { replace: true });
      return;
    }
    if (r.kind === "flow") setPassword("");
    if (await recover(r)) {
      if (r.kind !== "flow") setResult(r);
      return;
    }
    setResult(r);
  };

  return (
    <AuthLayout title={t`Log In`} testId="login">
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" ? (
        <form className="auth-form" onSubmit={(e) => void submit(e)} noValidate data-testid="login-form">
          <Messages messages={flowMessages(state.flow)} testId="flow-messages" />
          <ResultAlert result={result} />
          {missing ? (
            <Alert>
              <Trans>Please enter your email or mobile number and your password.</Trans>
            </Alert>
          ) : null}
          <div className="auth-field">
            <label htmlFor="login-identifier" className="auth-label">
              <Trans>Email or mobile number</Trans>
            </label>
            <input
              id="login-identifier"
              className="auth-input"
              name="identifier"
              type="text"
              autoComplete="username"
              value={identifier}
              placeholder={t`name@example.com or +819012345678`}
              onChange={(e) => setIdentifier(e.target.value)}
              required
            />
          </div>
          <div className="auth-field">
            <label htmlFor="login-password" className="auth-label">
              <Trans>Password</Trans>
            </label>
            <input
              id="login-password"
              className="auth-input"
              name="password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              required
            />
          </div>
          <div className="auth-field auth-field--check">
            <label htmlFor="login-remember">
              <input id="login-remember" type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
              <Trans>Stay logged in for 5 days</Trans>
            </label>
          </div>
          <div className="auth-actions">
            <button type="submit" className="button button--primary" disabled={busy} data-testid="login-submit">
              <Trans>Log In</Trans>
            </button>
          </div>
        </form>
      ) : null}
      <div className="auth-links">
        <Link to="/forgotPassword_A">
          <Trans>Forgot password?</Trans>
        </Link>
        <Link to={returnTo !== "/" ? `/regist?return_to=${encodeURIComponent(returnTo)}` : "/regist"}>
          <Trans>No account? Sign Up</Trans>
        </Link>
      </div>
    </AuthLayout>
  );
}
