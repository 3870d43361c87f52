import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useState } from "react";
import { useLocation, useNavigate } from "react-router";
import { Form, FormError, NewPasswordFields, setPasswordRuleErrors, SubmitButton, useZodForm } from "~/components/form";
import { passwordPairSchema } from "~/lib/validation";
import { AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { unplacedMessages, useFlowFailure } from "./fieldMessages";
import { csrfToken, Messages } from "./FlowForm";
import { submitFlow, type FlowResult } from "./kratos";
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

// The password node of a settings flow is the form's password field.
const PASSWORD_NODES = { password: "password" };

// Bind Password (/bindPsd): adds a password to an account created without
// one (or replaces it), through the settings flow's password method.
export function BindPasswordScreen() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const { state, recover } = useFlow("settings");
  useSettingsGate(state);
  const [result, setResult] = useState<FlowResult | null>(null);
  const failed = useFlowFailure(recover, setResult);
  const form = useZodForm(passwordPairSchema, { defaultValues: { password: "", confirm: "" } });

  const submit = async ({ password }: { password: string }) => {
    if (state.status !== "ready") return;
    setResult(null);
    const r = await submitFlow("settings", state.flow.id, { method: "password", password, csrf_token: csrfToken(state.flow) });
    if (r.kind === "success") {
      showToast(t`Setting successful!`);
      await navigate("/", { replace: true });
      return;
    }
    if (r.kind === "aal2_required") {
      await navigate(`/otpauth?return_to=${encodeURIComponent("/bindPsd")}`);
      return;
    }
    if (r.kind === "policy") setPasswordRuleErrors(form, "password", r.rules);
    await failed(form, r, PASSWORD_NODES);
  };

  return (
    <AuthLayout title={t`Set password`} testId="bind-password">
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" && state.result.kind !== "aal2_required" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" ? (
        <Form form={form} onSubmit={submit} className="auth-form" data-testid="bind-form">
          <p className="auth-hint">
            <Trans>Set a password to log in with your email address or mobile number.</Trans>
          </p>
          <Messages messages={unplacedMessages(state.flow, PASSWORD_NODES).filter((m) => m.type === "error")} testId="flow-messages" />
          <ResultAlert result={result} />
          <NewPasswordFields />
          <FormError />
          <div className="auth-actions">
            <SubmitButton testId="bind-submit">
              <Trans>Save</Trans>
            </SubmitButton>
          </div>
        </Form>
      ) : null}
    </AuthLayout>
  );
}
