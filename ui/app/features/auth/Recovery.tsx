import { Trans, useLingui } from "@lingui/react/macro";
import { useState, type FormEvent } from "react";
import { Link, useNavigate } from "react-router";
import { loadMe } from "~/lib/session";
import { Alert, AuthLayout, Loading, PasswordRules, ResultAlert } from "./AuthLayout";
import { csrfToken, FlowForm, FlowMessages, Messages } from "./FlowForm";
import { flowIdFrom, flowMessages, getFlow, submitFlow, type FlowResult, type PasswordRule } from "./kratos";
import { validationText } from "~/lib/validation";
import { brokenPasswordRules } from "./password";
import { showToast } from "./toast";
import { useFlow } from "./useFlow";

// Forgot password, step A (/forgotPassword_A): the e-mail address; Kratos
// sends a recovery code to it.
export function RecoveryStartScreen() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const { state, recover } = useFlow("recovery");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<FlowResult | null>(null);

  const submit = async (body: Record<string, unknown>) => {
    if (state.status !== "ready") return;
    setBusy(true);
    setResult(null);
    const r = await submitFlow("recovery", state.flow.id, body);
    setBusy(false);
    if (r.kind === "flow" && r.flow.state === "sent_email") {
      await navigate(`/forgotPassword_B?flow=${encodeURIComponent(r.flow.id)}`);
      return;
    }
    if (await recover(r)) {
      if (r.kind !== "flow") setResult(r);
      return;
    }
    setResult(r);
  };

  return (
    <AuthLayout title={t`Forgot password`} testId="recovery-a">
      <p className="auth-hint">
        <Trans>Enter the email address of your account. We will send you a code to reset your password, valid for 30 minutes.</Trans>
      </p>
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" ? (
        <>
          <FlowMessages flow={state.flow} />
          <ResultAlert result={result} />
          <FlowForm flow={state.flow} busy={busy} onSubmit={submit} testId="recovery-form" labels={{ email: t`Email`, "method=code": t`Send code` }} />
        </>
      ) : null}
      <div className="auth-links">
        <Link to="/login">
          <Trans>Back to Log In</Trans>
        </Link>
      </div>
    </AuthLayout>
  );
}

// Forgot password, step B (/forgotPassword_B?flow=): the code and the new
// password. The code completes the recovery flow (which signs the member
// in), then the password is set through the settings flow Kratos hands over.
export function RecoveryCodeScreen() {
  const { t, i18n } = useLingui();
  const navigate = useNavigate();
  const { state, recover } = useFlow("recovery");
  const [code, setCode] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [settingsId, setSettingsId] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [tried, setTried] = useState(false);
  const [result, setResult] = useState<FlowResult | null>(null);
  const [reported, setReported] = useState<PasswordRule[]>([]);
  const broken = brokenPasswordRules(password);
  const mismatch = confirm !== password;

  const setNewPassword = async (sid: string): Promise<void> => {
    const sf = await getFlow("settings", sid);
    if (sf.kind !== "flow") {
      if (sf.kind === "aal2_required") {
        await navigate(`/otpauth?return_to=${encodeURIComponent("/bindPsd")}`);
        return;
      }
      setResult(sf);
      return;
    }
    const r = await submitFlow("settings", sid, { method: "password", password, csrf_token: csrfToken(sf.flow) });
    if (r.kind === "success") {
      showToast(t`Modified successfully!`);
      await loadMe({ force: true });
      await navigate("/", { replace: true });
      return;
    }
    if (r.kind === "aal2_required") {
      await navigate(`/otpauth?return_to=${encodeURIComponent("/bindPsd")}`);
      return;
    }
    if (r.kind === "policy") setReported(r.rules);
    if (r.kind === "flow") {
      const msgs = flowMessages(r.flow).filter((m) => m.type === "error");
      setResult(msgs.length ? { kind: "flow", flow: r.flow } : null);
      return;
    }
    setResult(r);
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (state.status !== "ready") return;
    if (broken.length > 0 || mismatch || (!settingsId && code.trim() === "")) return;
    setBusy(true);
    setResult(null);
    setReported([]);
    try {
      if (settingsId) {
        await setNewPassword(settingsId);
        return;
      }
      const r = await submitFlow("recovery", state.flow.id, { method: "code", code: code.trim(), csrf_token: csrfToken(state.flow) });
      const sid =
        r.kind === "redirect"
          ? flowIdFrom(r.to) ?? r.continueWith.find((c) => c.action === "show_settings_ui")?.flow?.id
          : r.kind === "success"
            ? r.continueWith.find((c) => c.action === "show_settings_ui")?.flow?.id
            : undefined;
      if (sid) {
        setSettingsId(sid);
        await setNewPassword(sid);
        return;
      }
      if (await recover(r)) {
        if (r.kind !== "flow") setResult(r);
        return;
      }
      setResult(r);
    } finally {
      setBusy(false);
    }
  };

  const sent = state.status === "ready" && state.flow.state === "sent_email";

  return (
    <AuthLayout title={t`Reset password`} testId="recovery-b">
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" && !sent && !settingsId ? (
        <p>
          <Trans>Request a code first.</Trans> <Link to="/forgotPassword_A">{t`Forgot password`}</Link>
        </p>
      ) : null}
      {state.status === "ready" && (sent || settingsId) ? (
        <form className="auth-form" onSubmit={(e) => void submit(e)} noValidate data-testid="reset-form">
          <p className="auth-hint">
            <Trans>Enter the code we sent to your email address (valid for 30 minutes) and your new password.</Trans>
          </p>
          <Messages messages={flowMessages(state.flow).filter((m) => m.type === "error")} testId="flow-messages" />
          {result?.kind === "flow" ? <Messages messages={flowMessages(result.flow).filter((m) => m.type === "error")} /> : <ResultAlert result={result} />}
          {settingsId ? (
            <Alert kind="success">
              <Trans>The code is confirmed. Now choose your new password.</Trans>
            </Alert>
          ) : (
            <div className="auth-field">
              <label htmlFor="reset-code" className="auth-label">
                <Trans>Verification code</Trans>
              </label>
              <input
                id="reset-code"
                className="auth-input"
                name="code"
                inputMode="numeric"
                autoComplete="one-time-code"
                value={code}
                onChange={(e) => setCode(e.target.value)}
              />
            </div>
          )}
          <div className="auth-field">
            <label htmlFor="reset-password" className="auth-label">
              <Trans>New password</Trans>
            </label>
            <input
              id="reset-password"
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
            <label htmlFor="reset-confirm" className="auth-label">
              <Trans>Confirm password</Trans>
            </label>
            <input
              id="reset-confirm"
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
            <button type="submit" className="button button--primary" disabled={busy} data-testid="reset-submit">
              <Trans>Reset password</Trans>
            </button>
          </div>
        </form>
      ) : null}
    </AuthLayout>
  );
}
