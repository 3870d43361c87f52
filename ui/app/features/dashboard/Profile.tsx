import { Trans, useLingui } from "@lingui/react/macro";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { Alert, Loading, ResultAlert } from "~/features/auth/AuthLayout";
import { COUNTRIES, countryName, toE164 } from "~/features/auth/countries";
import {
  csrfToken,
  FlowForm,
  FlowMessages,
  initialValues,
} from "~/features/auth/FlowForm";
import {
  getFlow,
  submitFlow,
  type Flow,
  type FlowResult,
} from "~/features/auth/kratos";
import { showToast } from "~/features/auth/toast";
import { errorText } from "~/lib/errors";
import { loadMe, useMember } from "~/lib/session";
import { emailSchema, mobileSchema, validationText } from "~/lib/validation";
import { getProfile, keys, setNickname } from "./api";
import { copyText } from "./copy";
import { KycSection } from "./Kyc";
import { LockoutNotice, useAfterChange } from "./Security";
import { useSettingsFlow } from "./useSettings";

// Profile (/dashboard?page=profile): nickname, user id, last login, email
// and mobile (bound or changed through Kratos' settings flow, then the code
// sent to the new address), and identity verification (KYC/KYB).

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const { t } = useLingui();
  return (
    <button
      type="button"
      className="button dash-copy"
      aria-label={label ?? t`Copy`}
      onClick={() =>
        void copyText(text).then((ok) =>
          showToast(
            ok ? t`Copy Successful` : t`Copy failed`,
            ok ? "success" : "error",
          ),
        )
      }
    >
      <Trans>Copy</Trans>
    </button>
  );
}

function Nickname({ current }: { current: string }) {
  const { t } = useLingui();
  const qc = useQueryClient();
  const [value, setValue] = useState(current);
  const [tried, setTried] = useState(false);
  useEffect(() => setValue(current), [current]);
  const trimmed = value.trim();
  const invalid = trimmed.length < 1 || [...trimmed].length > 32;
  const m = useMutation({
    mutationFn: setNickname,
    onSuccess: async () => {
      showToast(t`Modified successfully!`);
      setTried(false);
      await Promise.all([
        qc.invalidateQueries({ queryKey: keys.profile }),
        loadMe({ force: true }),
      ]);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (invalid || trimmed === current) return;
    m.mutate(trimmed);
  };
  return (
    <form
      className="dash-inline"
      onSubmit={submit}
      noValidate
      data-testid="nickname-form"
    >
      <label htmlFor="profile-nickname" className="auth-label">
        <Trans>Nickname</Trans>
      </label>
      <div className="dash-row">
        <input
          id="profile-nickname"
          className="auth-input"
          value={value}
          maxLength={32}
          autoComplete="nickname"
          onChange={(e) => setValue(e.target.value)}
          aria-invalid={(tried && invalid) || undefined}
        />
        <button
          type="submit"
          className="button button--primary"
          disabled={m.isPending}
          data-testid="nickname-save"
        >
          <Trans>Save</Trans>
        </button>
      </div>
      {tried && invalid ? (
        <Alert>{t`The nickname is 1 to 32 characters.`}</Alert>
      ) : null}
      {m.isError ? (
        <Alert>{errorText(m.error, t`Network anomaly`)}</Alert>
      ) : null}
    </form>
  );
}

// The code sent to a new address (Kratos' verification flow by id).
function VerifyCode({
  flowId,
  onDone,
}: {
  flowId: string;
  onDone: () => void;
}) {
  const { t } = useLingui();
  const [flow, setFlow] = useState<Flow | null>(null);
  const [result, setResult] = useState<FlowResult | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let live = true;
    void getFlow("verification", flowId).then((r) => {
      if (!live) return;
      if (r.kind === "flow") setFlow(r.flow);
      else setResult(r);
    });
    return () => {
      live = false;
    };
  }, [flowId]);
  const submit = async (body: Record<string, unknown>) => {
    if (!flow) return;
    setBusy(true);
    setResult(null);
    const r = await submitFlow("verification", flow.id, body);
    setBusy(false);
    if (r.kind === "success") {
      showToast(t`Setting successful!`);
      await loadMe({ force: true });
      onDone();
      return;
    }
    if (r.kind === "flow") setFlow(r.flow);
    else setResult(r);
  };
  const address = flow
    ? String(initialValues(flow).email ?? initialValues(flow).phone ?? "")
    : "";
  return (
    <div className="dash-verify" data-testid="verify-code">
      <p className="auth-hint">
        {address ? (
          <Trans>
            We sent a code to {address}. Enter it below; it is valid for 30
            minutes.
          </Trans>
        ) : (
          <Trans>
            We sent you a code. Enter it below; it is valid for 30 minutes.
          </Trans>
        )}
      </p>
      <ResultAlert result={result} />
      {flow ? (
        <>
          <FlowMessages flow={flow} />
          <FlowForm
            flow={flow}
            busy={busy}
            onSubmit={submit}
            testId="verify-form"
            labels={{ code: t`Verification code`, "method=code": t`Verify` }}
          />
        </>
      ) : result ? null : (
        <Loading />
      )}
    </div>
  );
}

type Kind = "email" | "phone";

// Binds or changes the e-mail address or mobile number: the settings flow's
// profile method with every current trait and the new address; Kratos then
// sends a code to the new address.
function AddressEditor({
  kind,
  flow,
  submit,
  busy,
  onClose,
}: {
  kind: Kind;
  flow: Flow;
  submit: (b: Record<string, unknown>) => Promise<FlowResult | null>;
  busy: boolean;
  onClose: () => void;
}) {
  const changed = useAfterChange();
  const { t, i18n } = useLingui();
  const [email, setEmail] = useState("");
  const [dial, setDial] = useState(COUNTRIES[0]!.dial);
  const [national, setNational] = useState("");
  const [tried, setTried] = useState(false);
  const [result, setResult] = useState<FlowResult | null>(null);
  const [verifyFlow, setVerifyFlow] = useState<string | null>(null);
  const parsed =
    kind === "email"
      ? emailSchema.safeParse(email)
      : mobileSchema.safeParse(national);
  const issue = parsed.success
    ? null
    : validationText(i18n, parsed.error.issues[0]?.message);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (issue) return;
    setResult(null);
    const traits: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(initialValues(flow))) {
      if (k.startsWith("traits.") && v !== "")
        traits[k.slice("traits.".length)] = v;
    }
    if (kind === "email") traits.email = email.trim();
    else traits.phone = toE164(dial, national);
    traits.terms = true;
    const r = await submit({
      method: "profile",
      traits,
      csrf_token: csrfToken(flow),
    });
    if (!r) return;
    if (r.kind === "success") {
      const next = r.continueWith.find(
        (c) => c.action === "show_verification_ui" && c.flow?.id,
      );
      // A new address starts the withdrawal lockout.
      await changed();
      if (next?.flow) setVerifyFlow(next.flow.id);
      else {
        showToast(t`Setting successful!`);
        onClose();
      }
      return;
    }
    if (r.kind !== "flow") setResult(r);
  };

  if (verifyFlow) return <VerifyCode flowId={verifyFlow} onDone={onClose} />;
  const errId = `bind-${kind}-err`;
  return (
    <form
      className="auth-form dash-verify"
      onSubmit={(e) => void onSubmit(e)}
      noValidate
      data-testid={`bind-${kind}-form`}
    >
      <FlowMessages flow={flow} />
      <ResultAlert result={result} />
      {kind === "email" ? (
        <div className="auth-field">
          <label htmlFor="bind-email" className="auth-label">
            <Trans>New email address</Trans>
          </label>
          <input
            id="bind-email"
            className="auth-input"
            type="email"
            autoComplete="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            aria-invalid={(tried && !!issue) || undefined}
            aria-describedby={errId}
          />
        </div>
      ) : (
        <div className="auth-field">
          <label htmlFor="bind-phone" className="auth-label">
            <Trans>New mobile number</Trans>
          </label>
          <div className="auth-phone">
            <select
              className="auth-select"
              aria-label={t`Country code`}
              value={dial}
              onChange={(e) => setDial(e.target.value)}
            >
              {COUNTRIES.map((c) => (
                <option key={c.iso} value={c.dial}>
                  {`${countryName(c.iso, i18n.locale)} +${c.dial}`}
                </option>
              ))}
            </select>
            <input
              id="bind-phone"
              className="auth-input"
              type="tel"
              autoComplete="tel-national"
              value={national}
              onChange={(e) => setNational(e.target.value)}
              aria-invalid={(tried && !!issue) || undefined}
              aria-describedby={errId}
            />
          </div>
        </div>
      )}
      <div id={errId}>{tried && issue ? <Alert>{issue}</Alert> : null}</div>
      <div className="auth-actions">
        <button type="button" className="button" onClick={onClose}>
          <Trans>Cancel</Trans>
        </button>
        <button
          type="submit"
          className="button button--primary"
          disabled={busy}
          data-testid={`bind-${kind}-submit`}
        >
          <Trans>Send code</Trans>
        </button>
      </div>
    </form>
  );
}

// The settings flow starts only when an editor opens.
function EditorHost({ kind, onClose }: { kind: Kind; onClose: () => void }) {
  const settings = useSettingsFlow();
  if (settings.state.status === "ready") {
    return (
      <AddressEditor
        kind={kind}
        flow={settings.state.flow}
        submit={settings.submit}
        busy={settings.busy}
        onClose={onClose}
      />
    );
  }
  if (settings.state.status === "failed")
    return <ResultAlert result={settings.state.result} />;
  return <Loading />;
}

function AddressRow({
  kind,
  value,
  verified,
  open,
  setOpen,
}: {
  kind: Kind;
  value?: string;
  verified: boolean;
  open: boolean;
  setOpen: (o: boolean) => void;
}) {
  const { t } = useLingui();
  const label = kind === "email" ? t`Email` : t`Mobile`;
  return (
    <div className="dash-field" data-testid={`profile-${kind}`}>
      <dt>{label}</dt>
      <dd>
        <div className="dash-row">
          <span className="dash-value" data-testid={`profile-${kind}-value`}>
            {value ?? <Trans>Not bound</Trans>}
          </span>
          {value ? (
            <span className={`dash-badge${verified ? " dash-badge--ok" : ""}`}>
              {verified ? t`Verified` : t`Not verified`}
            </span>
          ) : null}
          {!open ? (
            <button
              type="button"
              className="button"
              onClick={() => setOpen(true)}
              data-testid={`bind-${kind}`}
            >
              {value ? <Trans>Change</Trans> : <Trans>Bind</Trans>}
            </button>
          ) : null}
        </div>
        {open ? (
          <EditorHost kind={kind} onClose={() => setOpen(false)} />
        ) : null}
      </dd>
    </div>
  );
}

export function ProfilePage() {
  const { t, i18n } = useLingui();
  const member = useMember();
  const q = useQuery({ queryKey: keys.profile, queryFn: getProfile });
  const p = q.data;
  const id = p?.id ?? member?.id ?? "";
  const last = p?.last_login;
  const lastAt = last?.at ? new Date(last.at) : null;
  // One address editor at a time (they share the settings flow).
  const [editing, setEditing] = useState<Kind | null>(null);
  return (
    <div className="dash-stack" data-testid="dashboard-profile">
      <LockoutNotice />
      <section className="dash-card" aria-labelledby="profile-title">
        <h2 id="profile-title">{t`Profile`}</h2>
        {q.isError ? (
          <Alert>{errorText(q.error, t`Network anomaly`)}</Alert>
        ) : null}
        <Nickname current={p?.nickname ?? member?.nickname ?? ""} />
        <dl className="dash-fields">
          <div className="dash-field">
            <dt>{t`User ID`}</dt>
            <dd>
              <div className="dash-row">
                <code className="dash-value" data-testid="profile-id">
                  {id}
                </code>
                {id ? <CopyButton text={id} label={t`Copy user ID`} /> : null}
              </div>
            </dd>
          </div>
          <div className="dash-field" data-testid="profile-last-login">
            <dt>{t`Last login`}</dt>
            <dd>
              {lastAt && Number.isFinite(lastAt.getTime()) ? (
                <>
                  <time dateTime={last!.at}>
                    {i18n.date(lastAt, {
                      dateStyle: "medium",
                      timeStyle: "medium",
                    })}
                  </time>
                  {last?.ip ? (
                    <span className="dash-muted"> · IP {last.ip}</span>
                  ) : null}
                </>
              ) : (
                <span className="dash-muted">
                  {q.isLoading ? t`Loading…` : t`No earlier login`}
                </span>
              )}
            </dd>
          </div>
          <AddressRow
            kind="email"
            value={member?.email}
            verified={member?.email_verified ?? false}
            open={editing === "email"}
            setOpen={(o) => setEditing(o ? "email" : null)}
          />
          <AddressRow
            kind="phone"
            value={member?.phone}
            verified={member?.phone_verified ?? false}
            open={editing === "phone"}
            setOpen={(o) => setEditing(o ? "phone" : null)}
          />
        </dl>
      </section>
      <KycSection />
    </div>
  );
}
