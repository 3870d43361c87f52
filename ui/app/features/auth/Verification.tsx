import { Trans, useLingui } from "@lingui/react/macro";
import { useState } from "react";
import { useNavigate, useSearchParams } from "react-router";
import { loadMe } from "~/lib/session";
import { AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { FlowForm, FlowMessages, initialValues } from "./FlowForm";
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
  const address = state.status === "ready" ? String(initialValues(state.flow).email ?? initialValues(state.flow).phone ?? "") : "";

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
          <FlowMessages flow={state.flow} />
          <ResultAlert result={result} />
          <FlowForm
            flow={state.flow}
            busy={busy}
            onSubmit={submit}
            testId="verification-form"
            labels={{ code: t`Verification code`, "method=code": sent ? t`Verify` : t`Send code` }}
          />
        </>
      ) : null}
    </AuthLayout>
  );
}
