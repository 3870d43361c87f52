import { Trans, useLingui } from "@lingui/react/macro";
import type { UiNode } from "@ory/client-fetch";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import { z } from "zod";
import {
  CodeField,
  Form,
  FormError,
  NewPasswordFields,
  setPasswordRuleErrors,
  SubmitButton,
  useZodForm,
} from "~/components/form";
import { Alert, Loading, ResultAlert } from "~/features/auth/AuthLayout";
import { useNodeErrors } from "~/features/auth/fieldMessages";
import {
  csrfToken,
  FlowForm,
  flowBody,
  FlowMessages,
  inputName,
  Messages,
  NodeView,
} from "~/features/auth/FlowForm";
import {
  createFlow,
  submitFlow,
  type Flow,
  type FlowResult,
  type PasswordRule,
} from "~/features/auth/kratos";
import { showToast } from "~/features/auth/toast";
import { loadMe, useMember, type Member } from "~/lib/session";
import { passwordPairSchema, totpCodeSchema } from "~/lib/validation";
import { getSecurity, keys, lockedUntil } from "./api";
import { copyText } from "./copy";
import { useSettingsFlow } from "./useSettings";

// Security (/dashboard?page=security, also Kratos' settings UI URL
// /dashboard/security): password change, Google Authenticator in the spec's
// five steps, recovery codes, OTP reset, and the 24-hour withdrawal lockout
// that any of these changes starts.

function node(flow: Flow, name: string): UiNode | undefined {
  return flow.ui.nodes.find(
    (n) =>
      inputName(n) === name || (n.attributes as { id?: string }).id === name,
  );
}

type Refresh = () => Promise<void>;

type Submit = (
  b: Record<string, unknown>,
  opts?: { show?: boolean },
) => Promise<FlowResult | null>;

type AuthenticatorProps = {
  flow: Flow;
  submit: Submit;
  show: (f: Flow) => void;
  busy: boolean;
  done: Refresh;
};

// The recovery codes shown to be written down.
function CodeList({ codes }: { codes: string[] }) {
  return (
    <ul className="auth-codes" data-testid="lookup-secrets">
      {codes.map((c) => (
        <li key={c}>
          <code>{c}</code>
        </li>
      ))}
    </ul>
  );
}

// The lockout is recorded by Kratos' settings hook, a moment after the
// change: after one, /me/security is read every second until it shows the
// lockout (for at most LOCKOUT_WATCH_MS).
export const LOCKOUT_WATCH_MS = 20_000;
let watchUntil = 0;

export function expectLockout(now = Date.now()): void {
  watchUntil = now + LOCKOUT_WATCH_MS;
}

// After a security change: the member (2FA state) and the lockout are read again.
export function useAfterChange(): Refresh {
  const qc = useQueryClient();
  return async () => {
    expectLockout();
    await Promise.all([
      loadMe({ force: true }),
      qc.invalidateQueries({ queryKey: keys.security }),
    ]);
  };
}

export function LockoutNotice() {
  const { i18n } = useLingui();
  const q = useQuery({
    queryKey: keys.security,
    queryFn: getSecurity,
    refetchInterval: (query) =>
      !lockedUntil(query.state.data) && Date.now() < watchUntil ? 1000 : false,
  });
  const until = lockedUntil(q.data);
  if (!until) return null;
  const when = i18n.date(until, { dateStyle: "medium", timeStyle: "short" });
  return (
    <div className="dash-notice" role="status" data-testid="withdraw-lockout">
      <Trans>
        Withdrawals are disabled for 24 hours after a change of password, email,
        mobile or authenticator: until {when}.
      </Trans>
    </div>
  );
}

const PASSWORD_NODES = { password: "password" };
const TOTP_NODES = { totp_code: "code" };

function PasswordChange({
  flow,
  submit,
  done,
}: {
  flow: Flow;
  submit: Submit;
  done: Refresh;
}) {
  const { t } = useLingui();
  const [result, setResult] = useState<FlowResult | null>(null);
  const form = useZodForm(passwordPairSchema, {
    defaultValues: { password: "", confirm: "" },
  });
  const nodeErrors = useNodeErrors();

  const onSubmit = async ({ password }: { password: string }) => {
    setResult(null);
    const r = await submit(flowBody(flow, { method: "password", password }));
    if (!r) return;
    if (r.kind === "success") {
      form.reset();
      showToast(t`Modified successfully!`);
      await done();
      return;
    }
    if (r.kind === "policy") setPasswordRuleErrors(form, "password", r.rules);
    if (r.kind === "flow") nodeErrors(form, r.flow, PASSWORD_NODES);
    else setResult(r);
  };

  return (
    <section
      className="dash-card"
      aria-labelledby="sec-password"
      data-testid="security-password"
    >
      <h2 id="sec-password">{t`Change password`}</h2>
      <Form form={form} onSubmit={onSubmit} className="auth-form">
        <ResultAlert result={result} />
        <NewPasswordFields />
        <FormError />
        <div className="auth-actions">
          <SubmitButton testId="password-submit">
            <Trans>Confirm</Trans>
          </SubmitButton>
        </div>
      </Form>
    </section>
  );
}

// The recovery codes of a flow (the lookup_secret_codes text node).
function recoveryCodes(flow: Flow): string[] {
  const n = node(flow, "lookup_secret_codes");
  const text = (
    n?.attributes as
      { text?: { context?: { secrets?: { text: string }[] } } } | undefined
  )?.text;
  return (text?.context?.secrets ?? []).map((s) => s.text);
}

const STEPS = 5;

// Google Authenticator in five steps: download the app, scan the QR code,
// save the recovery key phrase (recovery codes), read the guide, enable
// with a code. The codes are confirmed right after the app is enabled, so
// the session that proved the code (aal2) is the one that stores them; the
// authenticator shows as on only once both went through. When storing the
// codes fails the member is told and tries again (with new codes when the
// codes' flow is no longer usable).
function AuthenticatorSetup({
  flow,
  submit,
  show,
  busy,
  done,
}: AuthenticatorProps) {
  const { t } = useLingui();
  const [step, setStep] = useState(0);
  const [saved, setSaved] = useState(false);
  const [result, setResult] = useState<FlowResult | null>(null);
  const form = useZodForm(z.object({ code: totpCodeSchema }), {
    defaultValues: { code: "" },
  });
  const nodeErrors = useNodeErrors();
  // The recovery codes live in a settings flow of their own: Kratos forgets
  // codes generated in a flow once that flow enables the app.
  const [lookupFlow, setLookupFlow] = useState<Flow | null>(null);
  const [generating, setGenerating] = useState(false);
  // The app is on (the settings flow Kratos answered with) but the recovery
  // codes are not stored yet.
  const [enabled, setEnabled] = useState<Flow | null>(null);
  const [unsaved, setUnsaved] = useState<"failed" | "stale" | "new" | null>(
    null,
  );
  const [confirming, setConfirming] = useState(false);
  const [unsavedWhy, setUnsavedWhy] = useState<Flow | null>(null);
  const codes = lookupFlow ? recoveryCodes(lookupFlow) : [];
  const qr = node(flow, "totp_qr");
  const secret = node(flow, "totp_secret_key");
  const codeNode = node(flow, "totp_code");
  const titles = [
    t`Download app`,
    t`Scan QR code`,
    t`Save recovery key phrase`,
    t`User guide`,
    t`Enable`,
  ];

  // New recovery codes in a settings flow of their own; true when shown.
  const generate = async (): Promise<boolean> => {
    setResult(null);
    setGenerating(true);
    try {
      const created = await createFlow("settings");
      if (created.kind !== "flow") {
        setResult(created);
        return false;
      }
      const r = await submitFlow("settings", created.flow.id, {
        method: "lookup_secret",
        lookup_secret_regenerate: true,
        csrf_token: csrfToken(created.flow),
      });
      if (r.kind === "flow" || (r.kind === "success" && r.flow)) {
        setLookupFlow(r.kind === "flow" ? r.flow : r.flow!);
        return true;
      }
      setResult(r);
      return false;
    } finally {
      setGenerating(false);
    }
  };

  // Stores the recovery codes shown (the app is on); only then the
  // authenticator shows as on.
  const confirm = async (after: Flow) => {
    setResult(null);
    if (lookupFlow && codes.length > 0) {
      setConfirming(true);
      let c: FlowResult;
      try {
        c = await submitFlow("settings", lookupFlow.id, {
          method: "lookup_secret",
          lookup_secret_confirm: true,
          csrf_token: csrfToken(lookupFlow),
        });
      } finally {
        setConfirming(false);
      }
      if (c.kind !== "success") {
        const stale = c.kind === "expired" || c.kind === "csrf";
        setUnsaved(stale ? "stale" : "failed");
        setUnsavedWhy(c.kind === "flow" ? c.flow : null);
        if (!stale && c.kind !== "flow") setResult(c);
        return;
      }
    }
    setEnabled(null);
    setUnsaved(null);
    setUnsavedWhy(null);
    form.reset();
    showToast(t`Setting successful!`);
    show(after);
    await done();
  };

  // Try again after a failed confirmation: new codes first when the codes'
  // flow can no longer be used (the member saves them, then confirms).
  const retry = async () => {
    if (!enabled) return;
    if (unsaved === "stale") {
      if (await generate()) setUnsaved("new");
      return;
    }
    await confirm(enabled);
  };

  const enable = async ({ code }: { code: string }) => {
    setResult(null);
    const r = await submit(
      flowBody(flow, { method: "totp", totp_code: code }),
      { show: false },
    );
    if (!r) return;
    if (r.kind !== "success") {
      if (r.kind === "flow") nodeErrors(form, r.flow, TOTP_NODES);
      else setResult(r);
      return;
    }
    // The app is on and this session is aal2: store the recovery codes shown
    // in step 3 (confirmed in their own flow).
    const after = r.flow ?? flow;
    setEnabled(after);
    await confirm(after);
  };

  if (enabled && unsaved) {
    return (
      <div className="dash-steps" data-testid="totp-setup">
        <Alert>
          {unsaved === "new" ? (
            <Trans>
              These are new recovery codes: save them, then try again.
            </Trans>
          ) : (
            <Trans>
              Your recovery codes could not be saved, so the authenticator is
              not set up yet. Please try again.
            </Trans>
          )}
        </Alert>
        {unsavedWhy ? <FlowMessages flow={unsavedWhy} /> : null}
        <ResultAlert result={result} />
        {unsaved !== "stale" && codes.length > 0 ? (
          <CodeList codes={codes} />
        ) : null}
        <div className="auth-actions">
          <button
            type="button"
            className="button button--primary"
            onClick={() => void retry()}
            disabled={busy || confirming || generating}
            data-testid="lookup-retry"
          >
            <Trans>Try again</Trans>
          </button>
        </div>
      </div>
    );
  }

  return (
    <div className="dash-steps" data-testid="totp-setup">
      <ol className="dash-stepper" aria-label={t`Steps`}>
        {titles.map((title, i) => (
          <li
            key={title}
            aria-current={i === step ? "step" : undefined}
            data-done={i < step}
          >
            <span className="dash-step-no">{i + 1}</span> {title}
          </li>
        ))}
      </ol>
      <ResultAlert result={result} />
      <div className="dash-step" data-testid={`totp-step-${step + 1}`}>
        <h3>
          {step + 1}. {titles[step]}
        </h3>
        {step === 0 ? (
          <p>
            <Trans>
              Install Google Authenticator (or another authenticator app) on
              your phone from its app store.
            </Trans>
          </p>
        ) : null}
        {step === 1 ? (
          <>
            <p>
              <Trans>
                Open the app and scan this QR code. If you cannot scan it, enter
                the key below by hand.
              </Trans>
            </p>
            {qr ? (
              <NodeView
                node={qr}
                value={undefined}
                onChange={() => undefined}
              />
            ) : null}
            {secret ? (
              <NodeView
                node={secret}
                value={undefined}
                onChange={() => undefined}
              />
            ) : null}
          </>
        ) : null}
        {step === 2 ? (
          <>
            <p>
              <Trans>
                Recovery codes let you log in if you lose your phone. Each works
                once. Write them down or keep them somewhere safe and offline.
              </Trans>
            </p>
            {codes.length === 0 ? (
              <button
                type="button"
                className="button"
                onClick={() => void generate()}
                disabled={busy || generating}
                data-testid="lookup-generate"
              >
                <Trans>Show recovery codes</Trans>
              </button>
            ) : (
              <>
                <CodeList codes={codes} />
                <div className="auth-actions">
                  <button
                    type="button"
                    className="button"
                    onClick={() =>
                      void copyText(codes.join("\n")).then((ok) =>
                        showToast(
                          ok ? t`Copy Successful` : t`Copy failed`,
                          ok ? "success" : "error",
                        ),
                      )
                    }
                  >
                    <Trans>Copy</Trans>
                  </button>
                </div>
                <label className="dash-check">
                  <input
                    type="checkbox"
                    checked={saved}
                    onChange={(e) => setSaved(e.target.checked)}
                    data-testid="lookup-saved"
                  />{" "}
                  <Trans>I have saved my recovery codes</Trans>
                </label>
              </>
            )}
          </>
        ) : null}
        {step === 3 ? (
          <ul className="dash-guide">
            <li>
              <Trans>The app shows a new 6-digit code every 30 seconds.</Trans>
            </li>
            <li>
              <Trans>
                After your password, log in with the current code from the app.
              </Trans>
            </li>
            <li>
              <Trans>
                Without your phone, log in with one of your recovery codes
                instead.
              </Trans>
            </li>
            <li>
              <Trans>
                Withdrawals are disabled for 24 hours after the authenticator
                changes.
              </Trans>
            </li>
          </ul>
        ) : null}
        {step === 4 ? (
          <Form form={form} onSubmit={enable} className="auth-form">
            {codeNode?.messages?.length && !form.formState.isSubmitted ? (
              <Messages messages={codeNode.messages} />
            ) : null}
            <CodeField
              name="code"
              label={<Trans>Authentication code</Trans>}
              length={6}
              testId="totp-code"
            />
            <FormError />
            <div className="auth-actions">
              <SubmitButton testId="totp-enable">
                <Trans>Enable</Trans>
              </SubmitButton>
            </div>
          </Form>
        ) : null}
      </div>
      <div className="dash-step-nav">
        <button
          type="button"
          className="button"
          onClick={() => setStep((s) => s - 1)}
          disabled={step === 0}
        >
          <Trans>Back</Trans>
        </button>
        {step < STEPS - 1 ? (
          <button
            type="button"
            className="button button--primary"
            onClick={() => setStep((s) => s + 1)}
            disabled={step === 2 && !saved}
            data-testid="totp-next"
          >
            <Trans>Next</Trans>
          </button>
        ) : null}
      </div>
    </div>
  );
}

function canResetOtp(m: Member | null): boolean {
  return !!m?.email && !!m.phone;
}

function Authenticator({
  flow,
  submit,
  show,
  busy,
  done,
}: AuthenticatorProps) {
  const { t } = useLingui();
  const member = useMember();
  const [result, setResult] = useState<FlowResult | null>(null);
  const [resetting, setResetting] = useState(false);
  const enrolled = !!node(flow, "totp_unlink");

  const unlink = async (reset: boolean) => {
    setResult(null);
    const r = await submit({
      method: "totp",
      totp_unlink: true,
      csrf_token: csrfToken(flow),
    });
    if (!r) return;
    if (r.kind === "success") {
      showToast(t`Setting successful!`);
      setResetting(reset);
      await done();
      return;
    }
    if (r.kind !== "flow") setResult(r);
  };

  return (
    <section
      className="dash-card"
      aria-labelledby="sec-totp"
      data-testid="security-totp"
    >
      <h2 id="sec-totp">{t`Google Authenticator`}</h2>
      <ResultAlert result={result} />
      {enrolled ? (
        <>
          <p data-testid="totp-enabled">
            <Trans>
              Google Authenticator is on: logging in asks for a code from the
              app.
            </Trans>
          </p>
          <div className="auth-actions">
            <button
              type="button"
              className="button"
              onClick={() => void unlink(false)}
              disabled={busy}
              data-testid="totp-disable"
            >
              <Trans>Disable</Trans>
            </button>
          </div>
          <h3>{t`Reset OTP`}</h3>
          {canResetOtp(member) ? (
            <>
              <p>
                <Trans>
                  Lost or replaced your phone? Reset the authenticator and set
                  up a new one.
                </Trans>
              </p>
              <div className="auth-actions">
                <button
                  type="button"
                  className="button"
                  onClick={() => void unlink(true)}
                  disabled={busy}
                  data-testid="otp-reset"
                >
                  <Trans>Reset OTP</Trans>
                </button>
              </div>
            </>
          ) : (
            <p className="auth-hint" data-testid="otp-reset-unavailable">
              <Trans>
                Resetting OTP needs both a mobile number and an email address
                bound to your account. Bind the missing one on the{" "}
                <Link to="/dashboard?page=profile">Profile</Link> page first.
              </Trans>
            </p>
          )}
        </>
      ) : (
        <>
          {resetting ? (
            <p className="auth-hint">
              <Trans>
                The old authenticator is removed. Set up the new one below.
              </Trans>
            </p>
          ) : null}
          <AuthenticatorSetup
            flow={flow}
            submit={submit}
            show={show}
            busy={busy}
            done={done}
          />
        </>
      )}
    </section>
  );
}

function RecoveryCodes({
  flow,
  submit,
  busy,
  done,
}: {
  flow: Flow;
  submit: (b: Record<string, unknown>) => Promise<FlowResult | null>;
  busy: boolean;
  done: Refresh;
}) {
  const { t } = useLingui();
  const [result, setResult] = useState<FlowResult | null>(null);
  // Only once the authenticator is on: before that the setup's step 3 holds them.
  if (
    !node(flow, "totp_unlink") ||
    !flow.ui.nodes.some((n) => n.group === "lookup_secret")
  )
    return null;
  const onSubmit = async (body: Record<string, unknown>) => {
    setResult(null);
    const r = await submit(body);
    if (!r) return;
    if (r.kind === "success") {
      showToast(t`Setting successful!`);
      await done();
    } else if (r.kind !== "flow") setResult(r);
  };
  return (
    <section
      className="dash-card"
      aria-labelledby="sec-lookup"
      data-testid="security-lookup"
    >
      <h2 id="sec-lookup">{t`Recovery codes`}</h2>
      <p className="auth-hint">
        <Trans>
          Regenerate them when you used some or think someone saw them: the old
          codes stop working once you confirm the new ones.
        </Trans>
      </p>
      <ResultAlert result={result} />
      <FlowForm
        flow={flow}
        groups={["lookup_secret"]}
        onSubmit={onSubmit}
        busy={busy}
        testId="lookup-form"
      />
    </section>
  );
}

export function SecurityPage() {
  const settings = useSettingsFlow();
  const { state, submit, show, busy } = settings;
  const done = useAfterChange();
  return (
    <div className="dash-stack" data-testid="dashboard-security">
      <LockoutNotice />
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" && state.result.kind !== "aal2_required" ? (
        <ResultAlert result={state.result} />
      ) : null}
      {state.status === "ready" ? (
        <>
          <FlowMessages flow={state.flow} />
          <PasswordChange flow={state.flow} submit={submit} done={done} />
          <Authenticator
            flow={state.flow}
            submit={submit}
            show={show}
            busy={busy}
            done={done}
          />
          <RecoveryCodes
            flow={state.flow}
            submit={submit}
            busy={busy}
            done={done}
          />
        </>
      ) : null}
    </div>
  );
}
