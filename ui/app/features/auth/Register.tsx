import { Trans, useLingui } from "@lingui/react/macro";
import { useMemo, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { useWatch } from "react-hook-form";
import { z } from "zod";
import {
  CheckboxField,
  checkPhone,
  Form,
  FormError,
  NewPasswordFields,
  PhoneField,
  setPasswordRuleErrors,
  SubmitButton,
  TextField,
  useZodForm,
} from "~/components/form";
import { REGISTER_ACCOUNT_KEY } from "~/lib/register";
import { loadMe } from "~/lib/session";
import { emailSchema, passwordSchema, sameAs } from "~/lib/validation";
import { readStored } from "~/preferences";
import { AuthLayout, Loading, ResultAlert } from "./AuthLayout";
import { COUNTRIES, looksLikePhone, toE164 } from "./countries";
import { unplacedMessages, useFlowFailure } from "./fieldMessages";
import { flowBody, Messages } from "./FlowForm";
import { submitFlow, type FlowResult } from "./kratos";
import { safeReturnTo } from "./return-to";
import { showToast } from "./toast";
import { useFlow } from "./useFlow";
import { isReferralCode } from "./validate";

type Tab = "email" | "mobile";

// The quick-register value of the home page: which tab, and what goes in it.
export function prefill(raw: string | null): { tab: Tab; email: string; dial: string; national: string } {
  const v = (raw ?? "").trim();
  const out = { tab: "email" as Tab, email: "", dial: COUNTRIES[0]!.dial, national: "" };
  if (v === "") return out;
  if (!looksLikePhone(v)) return { ...out, email: v };
  const digits = v.replace(/[^\d+]/g, "");
  if (digits.startsWith("+")) {
    // Longest calling code that matches.
    const match = [...COUNTRIES].sort((a, b) => b.dial.length - a.dial.length).find((c) => digits.slice(1).startsWith(c.dial));
    if (match) return { ...out, tab: "mobile", dial: match.dial, national: digits.slice(1 + match.dial.length) };
  }
  return { ...out, tab: "mobile", national: digits.replace(/^\+/, "") };
}

// The sign-up form: the identifier of the chosen tab (email, or calling code
// and number), the new password twice, an optional referral code and the terms.
const registerSchema = z
  .object({
    tab: z.enum(["email", "mobile"]),
    email: z.string(),
    dial: z.string(),
    national: z.string(),
    password: passwordSchema,
    confirm: z.string(),
    referral: z.string(),
    terms: z.boolean(),
  })
  .superRefine((v, ctx) => {
    if (v.tab === "email") {
      const r = emailSchema.safeParse(v.email);
      if (!r.success) ctx.addIssue({ code: "custom", message: r.error.issues[0]?.message ?? "email.invalid", path: ["email"] });
    } else checkPhone(v.dial, v.national, ctx);
    sameAs("password", "confirm")(v, ctx);
    const ref = v.referral.trim();
    if (ref !== "" && !isReferralCode(ref)) ctx.addIssue({ code: "custom", message: "referral.invalid", path: ["referral"] });
    if (!v.terms) ctx.addIssue({ code: "custom", message: "terms.required", path: ["terms"] });
  });
type RegisterValues = z.output<typeof registerSchema>;

// Kratos' registration nodes that are fields of the form.
const REGISTER_NODES = {
  "traits.email": "email",
  "traits.phone": "national",
  password: "password",
  "traits.referral_code": "referral",
  "traits.terms": "terms",
};

export function RegisterScreen() {
  const { t, i18n } = useLingui();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const returnTo = safeReturnTo(params.get("return_to"));
  const { state, recover } = useFlow("registration");
  const initial = useMemo(() => prefill(readStored(REGISTER_ACCOUNT_KEY)), []);
  const form = useZodForm(registerSchema, {
    defaultValues: {
      tab: initial.tab,
      email: initial.email,
      dial: initial.dial,
      national: initial.national,
      password: "",
      confirm: "",
      referral: params.get("ref") ?? "",
      terms: false,
    },
  });
  const tab = useWatch({ control: form.control, name: "tab" });
  const [result, setResult] = useState<FlowResult | null>(null);
  const failed = useFlowFailure(recover, setResult);

  const choose = (next: Tab) => {
    form.setValue("tab", next);
    form.clearErrors(["email", "national"]);
  };

  const submit = async (v: RegisterValues) => {
    if (state.status !== "ready") return;
    setResult(null);
    const ref = v.referral.trim();
    const traits: Record<string, unknown> = {
      terms: true,
      locale: i18n.locale === "ja" ? "ja-JP" : "en-US",
      ...(v.tab === "email" ? { email: v.email.trim() } : { phone: toE164(v.dial, v.national) }),
      ...(ref !== "" ? { referral_code: ref.toUpperCase() } : {}),
    };
    const r = await submitFlow("registration", state.flow.id, flowBody(state.flow, { method: "password", password: v.password, traits }));
    if (r.kind === "success") {
      showToast(t`successfully registered!`);
      const verify = r.continueWith.find((c) => c.action === "show_verification_ui" && c.flow?.id);
      await loadMe({ force: true });
      if (verify?.flow) {
        const q = new URLSearchParams({ flow: verify.flow.id });
        if (returnTo !== "/") q.set("return_to", returnTo);
        await navigate(`/otp?${q.toString()}`, { replace: true, state: { address: verify.flow.verifiable_address } });
      } else await navigate(returnTo, { replace: true });
      return;
    }
    if (r.kind === "policy") setPasswordRuleErrors(form, "password", r.rules);
    await failed(form, r, REGISTER_NODES);
  };

  return (
    <AuthLayout title={t`Sign Up`} testId="register">
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" ? (
        <>
          <div className="auth-tabs" role="tablist" aria-label={t`Sign up with`}>
            <button type="button" role="tab" aria-selected={tab === "email"} onClick={() => choose("email")} data-testid="tab-email">
              <Trans>Email</Trans>
            </button>
            <button type="button" role="tab" aria-selected={tab === "mobile"} onClick={() => choose("mobile")} data-testid="tab-mobile">
              <Trans>Mobile</Trans>
            </button>
          </div>
          <Form form={form} onSubmit={submit} className="auth-form" data-testid="register-form">
            <Messages messages={unplacedMessages(state.flow, REGISTER_NODES)} testId="flow-messages" />
            <ResultAlert result={result} />
            {tab === "email" ? (
              <TextField name="email" label={<Trans>Email</Trans>} type="email" autoComplete="email" />
            ) : (
              <PhoneField name="national" dial="dial" label={<Trans>Mobile number</Trans>} />
            )}
            <NewPasswordFields label={<Trans>Password</Trans>} />
            <TextField name="referral" label={<Trans>Referral code (optional)</Trans>} autoComplete="off" />
            <CheckboxField name="terms" label={<Trans>I have read and agree to the Terms of Use</Trans>} />
            <FormError />
            <div className="auth-actions">
              <SubmitButton testId="register-submit">
                <Trans>Sign Up</Trans>
              </SubmitButton>
            </div>
          </Form>
        </>
      ) : null}
      <div className="auth-links">
        <Link to="/login">
          <Trans>Already have an account? Log In</Trans>
        </Link>
      </div>
    </AuthLayout>
  );
}
