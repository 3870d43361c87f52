import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { z } from "zod";
import { CheckboxField, Form, FormError, SubmitButton, TextField, useZodForm } from "~/components/form";
import { loadMe } from "~/lib/session";
import { AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { unplacedMessages, useFlowFailure } from "./fieldMessages";
import { flowBody, Messages } from "./FlowForm";
import { submitFlow, type FlowResult } from "./kratos";
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

// The login form: both fields are needed (one message for either missing).
const loginSchema = z.object({
  identifier: z.string().trim().min(1, "login.missing"),
  password: z.string().min(1, "login.missing"),
  remember: z.boolean(),
});

// Kratos' login nodes that are fields of the form.
const LOGIN_NODES = { identifier: "identifier", password: "password" };

export function LoginScreen() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const returnTo = safeReturnTo(params.get("return_to"));
  const { state, recover } = useFlow("login");
  const form = useZodForm(loginSchema, { defaultValues: { identifier: "", password: "", remember: false } });
  const [result, setResult] = useState<FlowResult | null>(null);
  const failed = useFlowFailure(recover, setResult);

  // Already signed in: straight back.
  const signedIn = state.status === "failed" && state.result.kind === "signed_in";
  useEffect(() => {
    if (signedIn) void navigate(returnTo, { replace: true });
  }, [signedIn, navigate, returnTo]);

  const submit = async ({ identifier, password, remember }: z.output<typeof loginSchema>) => {
    if (state.status !== "ready") return;
    setResult(null);
    const r = await submitFlow(
      "login",
      state.flow.id,
      flowBody(state.flow, { method: "password", identifier, password }),
      { remember },
    );
    if (r.kind === "success") {
      await afterSignIn(navigate, returnTo, t`Login succeeded!`);
      return;
    }
    // Kratos sends a member with 2FA to the second-factor step.
    if (r.kind === "redirect" && /aal=aal2/.test(r.to)) {
      await navigate(`/otpauth?return_to=${encodeURIComponent(returnTo)}`, { replace: true });
      return;
    }
    if (r.kind === "flow") form.setValue("password", "");
    await failed(form, r, LOGIN_NODES);
  };

  return (
    <AuthLayout title={t`Log In`} testId="login">
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" ? (
        <Form form={form} onSubmit={submit} className="auth-form" data-testid="login-form">
          <Messages messages={unplacedMessages(state.flow, LOGIN_NODES)} testId="flow-messages" />
          <ResultAlert result={result} />
          <TextField
            name="identifier"
            label={<Trans>Email or mobile number</Trans>}
            autoComplete="username"
            placeholder={t`name@example.com or +819012345678`}
            required
          />
          <TextField name="password" label={<Trans>Password</Trans>} type="password" autoComplete="current-password" required />
          <CheckboxField name="remember" label={<Trans>Stay logged in for 5 days</Trans>} />
          <FormError />
          <div className="auth-actions">
            <SubmitButton testId="login-submit">
              <Trans>Log In</Trans>
            </SubmitButton>
          </div>
        </Form>
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
