import { Trans, useLingui } from "@lingui/react/macro";
import { useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { FlowForm, Messages } from "./FlowForm";
import { submitFlow, type FlowResult } from "./kratos";
import { afterSignIn } from "./Login";
import { safeReturnTo } from "./return-to";
import { useFlow } from "./useFlow";

type Mode = "totp" | "lookup_secret";

// The second factor (/otpauth): a code of the authenticator app, or one of
// the recovery codes saved when it was set up.
export function OtpAuthScreen() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const returnTo = safeReturnTo(params.get("return_to"));
  const { state, recover } = useFlow("login", { aal: "aal2" });
  const [mode, setMode] = useState<Mode>("totp");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<FlowResult | null>(null);

  const groups = state.status === "ready" ? new Set(state.flow.ui.nodes.map((n) => n.group)) : new Set<string>();
  const active: Mode = groups.has(mode) ? mode : groups.has("totp") ? "totp" : "lookup_secret";

  const submit = async (body: Record<string, unknown>) => {
    if (state.status !== "ready") return;
    setBusy(true);
    setResult(null);
    const r = await submitFlow("login", state.flow.id, body);
    setBusy(false);
    if (r.kind === "success") {
      await afterSignIn(navigate, returnTo, t`Login succeeded!`);
      return;
    }
    if (await recover(r)) {
      if (r.kind !== "flow") setResult(r);
      return;
    }
    setResult(r);
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
              <button type="button" role="tab" aria-selected={active === "totp"} onClick={() => setMode("totp")} data-testid="tab-totp">
                <Trans>Authenticator app</Trans>
              </button>
            ) : null}
            {groups.has("lookup_secret") ? (
              <button type="button" role="tab" aria-selected={active === "lookup_secret"} onClick={() => setMode("lookup_secret")} data-testid="tab-lookup">
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
          <Messages messages={(state.flow.ui.messages ?? []).filter((m) => m.id !== 1010004)} testId="flow-messages" />
          <ResultAlert result={result} />
          <FlowForm
            key={`${state.flow.id}-${active}`}
            flow={state.flow}
            groups={[active]}
            busy={busy}
            onSubmit={submit}
            testId="otpauth-form"
            labels={{ totp_code: t`Authentication code`, lookup_secret: t`Recovery code`, "method=totp": t`Verify`, "method=lookup_secret": t`Verify` }}
          />
        </>
      ) : null}
    </AuthLayout>
  );
}
