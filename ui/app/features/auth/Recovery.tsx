import { Trans, useLingui } from "@lingui/react/macro";
import { useState } from "react";
import { Link, useNavigate } from "react-router";
import { z } from "zod";
import {
  CodeField,
  Form,
  FormError,
  NewPasswordFields,
  setPasswordRuleErrors,
  SubmitButton,
  TextField,
  useZodForm,
} from "~/components/form";
import { loadMe } from "~/lib/session";
import { emailSchema, passwordSchema, sameAs } from "~/lib/validation";
import { Alert, AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { unplacedMessages, useFlowFailure, useNodeErrors } from "./fieldMessages";
import { flowBody, Messages } from "./FlowForm";
import { flowIdFrom, getFlow, submitFlow, type Flow, type FlowResult } from "./kratos";
import { showToast } from "./toast";
import { useFlow } from "./useFlow";

const START_NODES = { email: "email" };

// Forgot password, step A (/forgotPassword_A): the e-mail address; Kratos
// sends a recovery code to it.
export function RecoveryStartScreen() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const { state, recover } = useFlow("recovery");
  const [result, setResult] = useState<FlowResult | null>(null);
  const failed = useFlowFailure(recover, setResult);
  const form = useZodForm(z.object({ email: emailSchema }), { defaultValues: { email: "" } });

  const submit = async ({ email }: { email: string }) => {
    if (state.status !== "ready") return;
    setResult(null);
    const r = await submitFlow("recovery", state.flow.id, flowBody(state.flow, { method: "code", email }));
    if (r.kind === "flow" && r.flow.state === "sent_email") {
      await navigate(`/forgotPassword_B?flow=${encodeURIComponent(r.flow.id)}`);
      return;
    }
    await failed(form, r, START_NODES);
  };

  return (
    <AuthLayout title={t`Forgot password`} testId="recovery-a">
      <p className="auth-hint">
        <Trans>Enter the email address of your account. We will send you a code to reset your password, valid for 30 minutes.</Trans>
      </p>
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" ? (
        <Form form={form} onSubmit={submit} className="auth-form" data-testid="recovery-form">
          <Messages messages={unplacedMessages(state.flow, START_NODES)} testId="flow-messages" />
          <ResultAlert result={result} />
          <TextField name="email" label={<Trans>Email</Trans>} type="email" autoComplete="email" />
          <FormError />
          <div className="auth-actions">
            <SubmitButton testId="recovery-submit">
              <Trans>Send code</Trans>
            </SubmitButton>
          </div>
        </Form>
      ) : null}
      <div className="auth-links">
        <Link to="/login">
          <Trans>Back to Log In</Trans>
        </Link>
      </div>
    </AuthLayout>
  );
}

// Step B: the code (until it is confirmed) and the new password twice.
const resetSchema = z
  .object({ confirmed: z.boolean(), code: z.string().trim(), password: passwordSchema, confirm: z.string() })
  .superRefine((v, ctx) => {
    if (!v.confirmed && v.code === "") ctx.addIssue({ code: "custom", message: "required", path: ["code"] });
    sameAs("password", "confirm")(v, ctx);
  });
type ResetValues = z.output<typeof resetSchema>;

const CODE_NODES = { code: "code" };
const PASSWORD_NODES = { password: "password" };

// Forgot password, step B (/forgotPassword_B?flow=): the code and the new
// password. The code completes the recovery flow (which signs the member
// in), then the password is set through the settings flow Kratos hands over.
export function RecoveryCodeScreen() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const { state, recover } = useFlow("recovery");
  const [settingsId, setSettingsId] = useState<string | null>(null);
  const [result, setResult] = useState<FlowResult | null>(null);
  const failed = useFlowFailure(recover, setResult);
  // The settings flow's messages no field shows (after a refused password).
  const [settingsFlow, setSettingsFlow] = useState<Flow | null>(null);
  const form = useZodForm(resetSchema, { defaultValues: { confirmed: false, code: "", password: "", confirm: "" } });
  const nodeErrors = useNodeErrors();

  const setNewPassword = async (sid: string, password: string): Promise<void> => {
    const sf = await getFlow("settings", sid);
    if (sf.kind !== "flow") {
      if (sf.kind === "aal2_required") {
        await navigate(`/otpauth?return_to=${encodeURIComponent("/bindPsd")}`);
        return;
      }
      setResult(sf);
      return;
    }
    const r = await submitFlow("settings", sid, flowBody(sf.flow, { method: "password", password }));
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
    if (r.kind === "policy") setPasswordRuleErrors(form, "password", r.rules);
    if (r.kind === "flow") {
      nodeErrors(form, r.flow, PASSWORD_NODES);
      setSettingsFlow(r.flow);
      return;
    }
    setResult(r);
  };

  const submit = async (v: ResetValues) => {
    if (state.status !== "ready") return;
    setResult(null);
    setSettingsFlow(null);
    if (settingsId) {
      await setNewPassword(settingsId, v.password);
      return;
    }
    const r = await submitFlow("recovery", state.flow.id, flowBody(state.flow, { method: "code", code: v.code }));
    const sid =
      r.kind === "redirect"
        ? (flowIdFrom(r.to) ?? r.continueWith.find((c) => c.action === "show_settings_ui")?.flow?.id)
        : r.kind === "success"
          ? r.continueWith.find((c) => c.action === "show_settings_ui")?.flow?.id
          : undefined;
    if (sid) {
      setSettingsId(sid);
      form.setValue("confirmed", true);
      await setNewPassword(sid, v.password);
      return;
    }
    await failed(form, r, CODE_NODES);
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
        <Form form={form} onSubmit={submit} className="auth-form" data-testid="reset-form">
          <p className="auth-hint">
            <Trans>Enter the code we sent to your email address (valid for 30 minutes) and your new password.</Trans>
          </p>
          <Messages messages={unplacedMessages(state.flow, CODE_NODES).filter((m) => m.type === "error")} testId="flow-messages" />
          {settingsFlow ? <Messages messages={unplacedMessages(settingsFlow, PASSWORD_NODES).filter((m) => m.type === "error")} /> : null}
          <ResultAlert result={result} />
          {settingsId ? (
            <Alert kind="success">
              <Trans>The code is confirmed. Now choose your new password.</Trans>
            </Alert>
          ) : (
            <CodeField name="code" label={<Trans>Verification code</Trans>} />
          )}
          <NewPasswordFields />
          <FormError />
          <div className="auth-actions">
            <SubmitButton testId="reset-submit">
              <Trans>Reset password</Trans>
            </SubmitButton>
          </div>
        </Form>
      ) : null}
    </AuthLayout>
  );
}
