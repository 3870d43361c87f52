import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useState } from "react";
import { useLocation, useNavigate, useSearchParams } from "react-router";
import { z } from "zod";
import { CodeField, Form, FormError, SubmitButton, TextField, useZodForm } from "~/components/form";
import { loadMe } from "~/lib/session";
import { emailSchema } from "~/lib/validation";
import { AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { unplacedMessages, useFlowFailure } from "./fieldMessages";
import { flowBody, inputName, isSubmit, Messages } from "./FlowForm";
import { submitFlow, type FlowResult } from "./kratos";
import { safeReturnTo } from "./return-to";
import { showToast } from "./toast";
import { useFlow } from "./useFlow";

// Before the code is sent: the address; after: the code.
const verifySchema = z
  .object({ sent: z.boolean(), email: z.string(), code: z.string().trim() })
  .superRefine((v, ctx) => {
    if (v.sent) {
      if (v.code === "") ctx.addIssue({ code: "custom", message: "required", path: ["code"] });
      return;
    }
    const r = emailSchema.safeParse(v.email);
    if (!r.success) ctx.addIssue({ code: "custom", message: r.error.issues[0]?.message ?? "email.invalid", path: ["email"] });
  });
type VerifyValues = z.output<typeof verifySchema>;

const VERIFY_NODES = { email: "email", code: "code" };

// Verification of an e-mail address or mobile number by code (/otp): after
// registration the code is already sent; opened directly it asks for the
// address first. Codes are valid for 30 minutes.
export function VerificationScreen() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const returnTo = safeReturnTo(params.get("return_to"));
  const { state, recover } = useFlow("verification");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<FlowResult | null>(null);
  const failed = useFlowFailure(recover, setResult);
  const [resent, setResent] = useState(false);
  const location = useLocation();
  const form = useZodForm(verifySchema, { defaultValues: { sent: false, email: "", code: "" } });

  const send = async (body: Record<string, unknown>) => {
    if (state.status !== "ready") return;
    setResult(null);
    const r = await submitFlow("verification", state.flow.id, flowBody(state.flow, body));
    if (r.kind === "success") {
      showToast(t`Your address has been verified.`);
      await loadMe({ force: true });
      await navigate(returnTo, { replace: true });
      return;
    }
    if (r.kind === "flow") form.setValue("code", "");
    await failed(form, r, VERIFY_NODES);
  };

  const sent = state.status === "ready" && state.flow.state === "sent_email";
  // The schema checks the field shown.
  useEffect(() => form.setValue("sent", sent), [form, sent]);
  const submit = (v: VerifyValues) => send(v.sent ? { method: "code", code: v.code } : { method: "code", email: v.email });
  // Kratos' resend button carries the address; after registration the address also comes with the navigation.
  const resendNode = state.status === "ready" ? state.flow.ui.nodes.find((n) => isSubmit(n) && inputName(n) === "email") : undefined;
  const fromNav = (location.state as { address?: unknown } | null)?.address;
  const address = resendNode
    ? String((resendNode.attributes as { value?: unknown }).value ?? "")
    : typeof fromNav === "string"
      ? fromNav
      : "";

  const resend = async () => {
    if (state.status !== "ready" || !address) return;
    setResent(false);
    setBusy(true);
    try {
      await send({ method: "code", email: address });
    } finally {
      setBusy(false);
    }
    setResent(true);
  };

  return (
    <AuthLayout title={t`Verification code`} testId="verification">
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" ? (
        <>
          <p className="auth-hint" data-testid="verification-hint">
            {sent ? (
              address ? (
                <Trans>We sent a code to {address}. Enter it below; it is valid for 30 minutes.</Trans>
              ) : (
                <Trans>We sent you a code. Enter it below; it is valid for 30 minutes.</Trans>
              )
            ) : (
              <Trans>Enter your email address and we will send you a code, valid for 30 minutes.</Trans>
            )}
          </p>
          {/* "A code has been sent" repeats the hint above. */}
          <Messages messages={unplacedMessages(state.flow, VERIFY_NODES).filter((m) => !(sent && (m.id === 1080001 || m.id === 1080003)) || resent)} testId="flow-messages" />
          <ResultAlert result={result} />
          <Form form={form} onSubmit={submit} className="auth-form" data-testid="verification-form">
            {sent ? (
              <CodeField key="code" name="code" label={<Trans>Verification code</Trans>} />
            ) : (
              <TextField key="email" name="email" label={<Trans>Email</Trans>} type="email" autoComplete="email" />
            )}
            <FormError />
            <div className="auth-actions">
              <SubmitButton testId="verification-submit">{sent ? <Trans>Verify</Trans> : <Trans>Send code</Trans>}</SubmitButton>
              {sent && address ? (
                <button type="button" className="button" disabled={busy} onClick={() => void resend()} data-testid="resend-code">
                  <Trans>Resend code</Trans>
                </button>
              ) : null}
            </div>
          </Form>
        </>
      ) : null}
    </AuthLayout>
  );
}
