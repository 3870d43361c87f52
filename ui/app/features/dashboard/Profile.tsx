import { Trans, useLingui } from "@lingui/react/macro";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { z } from "zod";
import {
  checkPhone,
  CodeField,
  Form,
  FormError,
  PhoneField,
  SubmitButton,
  TextField,
  useZodForm,
} from "~/components/form";
import { Alert, Loading, ResultAlert } from "~/features/auth/AuthLayout";
import { COUNTRIES, toE164 } from "~/features/auth/countries";
import { unplacedMessages, useNodeErrors } from "~/features/auth/fieldMessages";
import {
  flowBody,
  initialValues,
  Messages,
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
import { emailSchema } from "~/lib/validation";
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

const nicknameSchema = z.object({
  nickname: z
    .string()
    .trim()
    .refine((v) => v.length >= 1 && [...v].length <= 32, "nickname.length"),
});

function Nickname({ current }: { current: string }) {
  const { t } = useLingui();
  const qc = useQueryClient();
  const form = useZodForm(nicknameSchema, {
    defaultValues: { nickname: current },
  });
  useEffect(() => form.reset({ nickname: current }), [form, current]);
  const m = useMutation({
    mutationFn: setNickname,
    onSuccess: async () => {
      showToast(t`Modified successfully!`);
      await Promise.all([
        qc.invalidateQueries({ queryKey: keys.profile }),
        loadMe({ force: true }),
      ]);
    },
  });
  // A failure is shown by <FormError> (the problem's text).
  const submit = async ({ nickname }: { nickname: string }) => {
    if (nickname === current) return;
    await m.mutateAsync(nickname);
  };
  return (
    <Form
      form={form}
      onSubmit={submit}
      className="dash-inline"
      data-testid="nickname-form"
    >
      <div className="dash-row dash-row--field">
        <TextField
          name="nickname"
          label={<Trans>Nickname</Trans>}
          maxLength={32}
          autoComplete="nickname"
        />
        <SubmitButton testId="nickname-save">
          <Trans>Save</Trans>
        </SubmitButton>
      </div>
      <FormError />
    </Form>
  );
}

const codeSchema = z.object({ code: z.string().trim().min(1, "required") });
const CODE_NODES = { code: "code" };

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
  const form = useZodForm(codeSchema, { defaultValues: { code: "" } });
  const nodeErrors = useNodeErrors();
  const submit = async ({ code }: { code: string }) => {
    if (!flow) return;
    setResult(null);
    const r = await submitFlow(
      "verification",
      flow.id,
      flowBody(flow, { method: "code", code }),
    );
    if (r.kind === "success") {
      showToast(t`Setting successful!`);
      await loadMe({ force: true });
      onDone();
      return;
    }
    if (r.kind === "flow") {
      setFlow(r.flow);
      nodeErrors(form, r.flow, CODE_NODES);
    } else setResult(r);
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
          <Messages
            messages={unplacedMessages(flow, CODE_NODES).filter(
              (m) => m.id !== 1080001 && m.id !== 1080003,
            )}
          />
          <Form
            form={form}
            onSubmit={submit}
            className="auth-form"
            data-testid="verify-form"
          >
            <CodeField name="code" label={<Trans>Verification code</Trans>} />
            <FormError />
            <div className="auth-actions">
              <SubmitButton testId="verify-submit">
                <Trans>Verify</Trans>
              </SubmitButton>
            </div>
          </Form>
        </>
      ) : result ? null : (
        <Loading />
      )}
    </div>
  );
}

type Kind = "email" | "phone";

// A new e-mail address, or a calling code and number.
const addressSchema = z
  .object({
    kind: z.enum(["email", "phone"]),
    email: z.string(),
    dial: z.string(),
    national: z.string(),
  })
  .superRefine((v, ctx) => {
    if (v.kind === "phone") {
      checkPhone(v.dial, v.national, ctx);
      return;
    }
    const r = emailSchema.safeParse(v.email);
    if (!r.success)
      ctx.addIssue({
        code: "custom",
        message: r.error.issues[0]?.message ?? "email.invalid",
        path: ["email"],
      });
  })
  .transform((v) => ({ ...v, email: v.email.trim() }));
type AddressValues = z.output<typeof addressSchema>;

const ADDRESS_NODES = { "traits.email": "email", "traits.phone": "national" };

// Binds or changes the e-mail address or mobile number: the settings flow's
// profile method with every current trait and the new address; Kratos then
// sends a code to the new address.
function AddressEditor({
  kind,
  flow,
  submit,
  onClose,
}: {
  kind: Kind;
  flow: Flow;
  submit: (b: Record<string, unknown>) => Promise<FlowResult | null>;
  onClose: () => void;
}) {
  const changed = useAfterChange();
  const { t } = useLingui();
  const [result, setResult] = useState<FlowResult | null>(null);
  const [verifyFlow, setVerifyFlow] = useState<string | null>(null);
  const form = useZodForm(addressSchema, {
    defaultValues: { kind, email: "", dial: COUNTRIES[0]!.dial, national: "" },
  });
  const nodeErrors = useNodeErrors();

  const onSubmit = async (v: AddressValues) => {
    setResult(null);
    const traits: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(initialValues(flow))) {
      if (k.startsWith("traits.") && x !== "")
        traits[k.slice("traits.".length)] = x;
    }
    if (kind === "email") traits.email = v.email;
    else traits.phone = toE164(v.dial, v.national);
    traits.terms = true;
    const r = await submit(flowBody(flow, { method: "profile", traits }));
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
    if (r.kind === "flow") nodeErrors(form, r.flow, ADDRESS_NODES);
    else setResult(r);
  };

  if (verifyFlow) return <VerifyCode flowId={verifyFlow} onDone={onClose} />;
  return (
    <Form
      form={form}
      onSubmit={onSubmit}
      className="auth-form dash-verify"
      data-testid={`bind-${kind}-form`}
    >
      <Messages messages={unplacedMessages(flow, ADDRESS_NODES)} />
      <ResultAlert result={result} />
      {kind === "email" ? (
        <TextField
          name="email"
          label={<Trans>New email address</Trans>}
          type="email"
          autoComplete="email"
        />
      ) : (
        <PhoneField
          name="national"
          dial="dial"
          label={<Trans>New mobile number</Trans>}
          testId="bind-country-code"
        />
      )}
      <FormError />
      <div className="auth-actions">
        <button type="button" className="button" onClick={onClose}>
          <Trans>Cancel</Trans>
        </button>
        <SubmitButton testId={`bind-${kind}-submit`}>
          <Trans>Send code</Trans>
        </SubmitButton>
      </div>
    </Form>
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
