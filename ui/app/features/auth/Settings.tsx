import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useState, type FormEvent } from "react";
import { useLocation, useNavigate } from "react-router";
import { Alert, AuthLayout, Loading, PasswordRules, ResultAlert } from "./AuthLayout";
import { csrfToken, Messages } from "./FlowForm";
import { flowMessages, submitFlow, type FlowResult, type PasswordRule } from "./kratos";
import { validationText } from "~/lib/validation";
import { brokenPasswordRules } from "./password";
import { showToast } from "./toast";
import { useFlow, type FlowState } from "./useFlow";

// A settings flow needs a session (else /login) and, once the member has
// 2FA, the second factor (else /otpauth); both come back here afterwards.
export function useSettingsGate(state: FlowState) {
  const navigate = useNavigate();
  const { pathname } = useLocation();
  useEffect(() => {
    if (state.status !== "failed") return;
    const r = state.result;
    const back = encodeURIComponent(pathname);
    if (r.kind === "aal2_required") void navigate(`/otpauth?return_to=${back}`, { replace: true });
    else if (r.kind === "error" && (r.status === 401 || r.id === "session_inactive")) void navigate(`/login?return_to=${back}`, { replace: true });
  }, [state, navigate, pathname]);
}

// Bind Password (/bindPsd): adds a password to an account created without
// one (or replaces it), through the settings flow's password method.
export function BindPasswordScreen() {
  const { t, i18n } = useLingui();
  const navigate = useNavigate();
  const { state, recover } = useFlow("settings");
  useSettingsGate(state);
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [tried, setTried] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<FlowResult | null>(null);
  const [reported, setReported] = useState<PasswordRule[]>([]);
  const broken = brokenPasswordRules(password);
  const mismatch = confirm !== password;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (state.status !== "ready" || broken.length > 0 || mismatch) return;
    setBusy(true);
    setResult(null);
    setReported([]);
    const r = await submitFlow("settings", state.flow.id, { method: "password", password, csrf_token: csrfToken(state.flow) });
    setBusy(false);
    if (r.kind === "success") {
      showToast(t`Setting successful!`);
      await navigate("/", { replace: true });
      return;
    }
    if (r.kind === "aal2_required") {
      await navigate(`/otpauth?return_to=${encodeURIComponent("/bindPsd")}`);
      return;
    }
    if (r.kind === "policy") setReported(r.rules);
    if (await recover(r)) {
      if (r.kind !== "flow") setResult(r);
      return;
    }
    setResult(r);
  };

  return (
    <AuthLayout title={t`Set password`} testId="bind-password">
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" && state.result.kind !== "aal2_required" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" ? (
        <form className="auth-form" onSubmit={(e) => void submit(e)} noValidate data-testid="bind-form">
          <p className="auth-hint">
            <Trans>Set a password to log in with your email address or mobile number.</Trans>
          </p>
          <Messages messages={flowMessages(state.flow).filter((m) => m.type === "error")} testId="flow-messages" />
          <ResultAlert result={result} />
          <div className="auth-field">
            <label htmlFor="bind-password" className="auth-label">
              <Trans>New password</Trans>
            </label>
            <input
              id="bind-password"
              className="auth-input"
              type="password"
              autoComplete="new-password"
              maxLength={15}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-describedby="password-rules"
            />
            <PasswordRules broken={broken} reported={reported} touched={tried} />
          </div>
          <div className="auth-field">
            <label htmlFor="bind-confirm" className="auth-label">
              <Trans>Confirm password</Trans>
            </label>
            <input
              id="bind-confirm"
              className="auth-input"
              type="password"
              autoComplete="new-password"
              maxLength={15}
              value={confirm}
              onChange={(e) => setConfirm(e.target.value)}
            />
            {tried && mismatch ? <Alert>{validationText(i18n, "password.mismatch")}</Alert> : null}
          </div>
          <div className="auth-actions">
            <button type="submit" className="button button--primary" disabled={busy} data-testid="bind-submit">
              <Trans>Save</Trans>
            </button>
          </div>
        </form>
      ) : null}
    </AuthLayout>
  );
}
