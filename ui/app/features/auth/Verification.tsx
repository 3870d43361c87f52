import { Trans, useLingui } from "@lingui/react/macro";
import { useState } from "react";
import { useLocation, useNavigate, useSearchParams } from "react-router";
import { loadMe } from "~/lib/session";
import { AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { csrfToken, FlowForm, inputName, isSubmit, Messages } from "./FlowForm";
import { submitFlow, type FlowResult } from "./kratos";
import { safeReturnTo } from "./return-to";
import { showToast } from "./toast";
import { useFlow } from "./useFlow";

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
  const [resent, setResent] = useState(false);
  const location = useLocation();

  const submit = async (body: Record<string, unknown>) => {
    if (state.status !== "ready") return;
    setBusy(true);
    setResult(null);
    const r = await submitFlow("verification", state.flow.id, body);
    setBusy(false);
    if (r.kind === "success") {
      showToast(t`Your address has been verified.`);
      await loadMe({ force: true });
      await navigate(returnTo, { replace: true });
      return;
    }
    if (await recover(r)) {
      if (r.kind !== "flow") setResult(r);
      return;
    }
    setResult(r);
  };

  const sent = state.status === "ready" && state.flow.state === "sent_email";
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
    await submit({ method: "code", email: address, csrf_token: csrfToken(state.flow) });
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
          <Messages messages={(state.flow.ui.messages ?? []).filter((m) => !(sent && (m.id === 1080001 || m.id === 1080003)) || resent)} testId="flow-messages" />
          <ResultAlert result={result} />
          <FlowForm
            flow={state.flow}
            busy={busy}
            onSubmit={submit}
            testId="verification-form"
            labels={{ code: t`Verification code`, "method=code": sent ? t`Verify` : t`Send code` }}
          />
          {sent && !resendNode && address ? (
            <div className="auth-actions">
              <button type="button" className="button" disabled={busy} onClick={() => void resend()} data-testid="resend-code">
                <Trans>Resend code</Trans>
              </button>
            </div>
          ) : null}
        </>
      ) : null}
    </AuthLayout>
  );
}
