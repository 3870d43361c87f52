import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { z } from "zod";
import { CodeField, Form, FormError, SubmitButton, TextField, useZodForm } from "~/components/form";
import { AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { unplacedMessages, useFlowFailure } from "./fieldMessages";
import { flowBody, Messages } from "./FlowForm";
import { submitFlow, type FlowResult } from "./kratos";
import { afterSignIn } from "./Login";
import { safeReturnTo } from "./return-to";
import { useFlow } from "./useFlow";

type Mode = "totp" | "lookup_secret";

// The code of the chosen second factor: six digits from the app, or a
// recovery code.
const otpSchema = z
  .object({ mode: z.enum(["totp", "lookup_secret"]), totp_code: z.string().trim(), lookup_secret: z.string().trim() })
  .superRefine((v, ctx) => {
    if (v.mode === "totp" && !/^\d{6}$/.test(v.totp_code)) ctx.addIssue({ code: "custom", message: "code.totp", path: ["totp_code"] });
    if (v.mode === "lookup_secret" && v.lookup_secret === "") ctx.addIssue({ code: "custom", message: "required", path: ["lookup_secret"] });
  });
type OtpValues = z.output<typeof otpSchema>;

const OTP_NODES = { totp_code: "totp_code", lookup_secret: "lookup_secret" };

// The second factor (/otpauth): a code of the authenticator app, or one of
// the recovery codes saved when it was set up.
export function OtpAuthScreen() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const returnTo = safeReturnTo(params.get("return_to"));
  // ?refresh=true: a signed-in member enters a code again (the wallet's step-up before money leaves the account).
  const refresh = params.get("refresh") === "true";
  const { state, recover } = useFlow("login", { aal: "aal2", refresh });
  const [mode, setMode] = useState<Mode>("totp");
  const [result, setResult] = useState<FlowResult | null>(null);
  const failed = useFlowFailure(recover, setResult);
  const form = useZodForm(otpSchema, { defaultValues: { mode: "totp", totp_code: "", lookup_secret: "" } });

  const groups = state.status === "ready" ? new Set(state.flow.ui.nodes.map((n) => n.group)) : new Set<string>();
  const active: Mode = groups.has(mode) ? mode : groups.has("totp") ? "totp" : "lookup_secret";
  // The schema checks the field of the factor shown.
  useEffect(() => form.setValue("mode", active), [form, active]);

  const choose = (m: Mode) => {
    setMode(m);
    form.clearErrors();
  };

  const submit = async (v: OtpValues) => {
    if (state.status !== "ready") return;
    setResult(null);
    const body = active === "totp" ? { method: "totp", totp_code: v.totp_code } : { method: "lookup_secret", lookup_secret: v.lookup_secret };
    const r = await submitFlow("login", state.flow.id, flowBody(state.flow, body));
    if (r.kind === "success") {
      await afterSignIn(navigate, returnTo, refresh ? t`Code confirmed.` : t`Login succeeded!`);
      return;
    }
    await failed(form, r, OTP_NODES);
  };

  const noSession = state.status === "failed" && state.result.kind === "error" && (state.result.status === 401 || state.result.id === "session_inactive");

  return (
    <AuthLayout title={t`Two-factor authentication`} testId="otpauth">
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" && !noSession ? <ResultAlert result={state.result} /> : null}
      {noSession ? (
        <p>
          <Trans>Please log in first.</Trans> <Link to={`/login?return_to=${encodeURIComponent(returnTo)}`}>{t`Log In`}</Link>
        </p>
      ) : null}
      {state.status === "ready" ? (
        <>
          <div className="auth-tabs" role="tablist" aria-label={t`Second factor`}>
            {groups.has("totp") ? (
              <button type="button" role="tab" aria-selected={active === "totp"} onClick={() => choose("totp")} data-testid="tab-totp">
                <Trans>Authenticator app</Trans>
              </button>
            ) : null}
            {groups.has("lookup_secret") ? (
              <button type="button" role="tab" aria-selected={active === "lookup_secret"} onClick={() => choose("lookup_secret")} data-testid="tab-lookup">
                <Trans>Recovery code</Trans>
              </button>
            ) : null}
          </div>
          <p className="auth-hint">
            {active === "totp" ? (
              <Trans>Enter the 6-digit code your authenticator app shows.</Trans>
            ) : (
              <Trans>Enter one of the recovery codes you saved. Each code works once.</Trans>
            )}
          </p>
          <Form form={form} onSubmit={submit} className="auth-form" data-testid="otpauth-form">
            <Messages messages={unplacedMessages(state.flow, OTP_NODES).filter((m) => m.id !== 1010004)} testId="flow-messages" />
            <ResultAlert result={result} />
            {active === "totp" ? (
              <CodeField key="totp" name="totp_code" label={<Trans>Authentication code</Trans>} length={6} />
            ) : (
              <TextField key="lookup" name="lookup_secret" label={<Trans>Recovery code</Trans>} autoComplete="off" spellCheck={false} />
            )}
            <FormError />
            <div className="auth-actions">
              <SubmitButton testId="otpauth-submit">
                <Trans>Verify</Trans>
              </SubmitButton>
            </div>
          </Form>
        </>
      ) : null}
    </AuthLayout>
  );
}
