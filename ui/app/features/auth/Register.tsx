import { Trans, useLingui } from "@lingui/react/macro";
import { useMemo, useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { REGISTER_ACCOUNT_KEY } from "~/lib/register";
import { loadMe } from "~/lib/session";
import { readStored } from "~/preferences";
import { AuthLayout, Loading, PasswordRules, ResultAlert } from "./AuthLayout";
import { COUNTRIES, countryName, looksLikePhone, toE164 } from "./countries";
import { csrfToken, Messages } from "./FlowForm";
import { flowMessages, submitFlow, type FlowResult, type PasswordRule } from "./kratos";
import { brokenPasswordRules } from "./password";
import { safeReturnTo } from "./return-to";
import { showToast } from "./toast";
import { useFlow } from "./useFlow";
import { emailSchema, mobileSchema, validationText } from "~/lib/validation";
import { isE164, isReferralCode } from "./validate";

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

export function RegisterScreen() {
  const { t, i18n } = useLingui();
  const firstIssue = (r: { success: boolean; error?: { issues: { message: string }[] } }) =>
    r.success ? null : validationText(i18n, r.error?.issues[0]?.message);
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const returnTo = safeReturnTo(params.get("return_to"));
  const { state, recover } = useFlow("registration");
  const initial = useMemo(() => prefill(readStored(REGISTER_ACCOUNT_KEY)), []);
  const [tab, setTab] = useState<Tab>(initial.tab);
  const [email, setEmail] = useState(initial.email);
  const [dial, setDial] = useState(initial.dial);
  const [national, setNational] = useState(initial.national);
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [referral, setReferral] = useState(params.get("ref") ?? "");
  const [terms, setTerms] = useState(false);
  const [tried, setTried] = useState(false);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<FlowResult | null>(null);
  const [reported, setReported] = useState<PasswordRule[]>([]);

  const broken = brokenPasswordRules(password);
  const phone = toE164(dial, national);
  const identifierError =
    tab === "email"
      ? firstIssue(emailSchema.safeParse(email))
      : (firstIssue(mobileSchema.safeParse(national)) ?? (isE164(phone) ? null : validationText(i18n, "mobile.invalid")));
  const confirmError = confirm !== password ? validationText(i18n, "password.mismatch") : null;
  const referralError = referral.trim() !== "" && !isReferralCode(referral.trim()) ? t`The referral code is 4 to 16 letters and digits.` : null;
  const termsError = terms ? null : t`Please agree to the Terms of Use.`;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (state.status !== "ready") return;
    if (identifierError || broken.length > 0 || confirmError || referralError || termsError) return;
    setBusy(true);
    setResult(null);
    setReported([]);
    const traits: Record<string, unknown> = {
      terms: true,
      locale: i18n.locale === "ja" ? "ja-JP" : "en-US",
      ...(tab === "email" ? { email: email.trim() } : { phone }),
      ...(referral.trim() !== "" ? { referral_code: referral.trim().toUpperCase() } : {}),
    };
    const r = await submitFlow("registration", state.flow.id, {
      method: "password",
      csrf_token: csrfToken(state.flow),
      password,
      traits,
    });
    setBusy(false);
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
    if (r.kind === "policy") setReported(r.rules);
    if (await recover(r)) {
      if (r.kind !== "flow") setResult(r);
      return;
    }
    setResult(r);
  };

  const fieldError = (msg: string | null, id: string) =>
    tried && msg ? (
      <p className="auth-message auth-message--error" role="alert" id={id}>
        {msg}
      </p>
    ) : null;

  return (
    <AuthLayout title={t`Sign Up`} testId="register">
      {state.status === "loading" ? <Loading /> : null}
      {state.status === "failed" ? <ResultAlert result={state.result} /> : null}
      {state.status === "ready" ? (
        <>
          <div className="auth-tabs" role="tablist" aria-label={t`Sign up with`}>
            <button type="button" role="tab" aria-selected={tab === "email"} onClick={() => setTab("email")} data-testid="tab-email">
              <Trans>Email</Trans>
            </button>
            <button type="button" role="tab" aria-selected={tab === "mobile"} onClick={() => setTab("mobile")} data-testid="tab-mobile">
              <Trans>Mobile</Trans>
            </button>
          </div>
          <form className="auth-form" onSubmit={(e) => void submit(e)} noValidate data-testid="register-form">
            <Messages messages={flowMessages(state.flow)} testId="flow-messages" />
            <ResultAlert result={result} />
            {tab === "email" ? (
              <div className="auth-field">
                <label htmlFor="reg-email" className="auth-label">
                  <Trans>Email</Trans>
                </label>
                <input
                  id="reg-email"
                  className="auth-input"
                  type="email"
                  name="email"
                  autoComplete="email"
                  value={email}
                  onChange={(e) => setEmail(e.target.value)}
                  aria-invalid={(tried && !!identifierError) || undefined}
                  aria-describedby="reg-email-err"
                />
                {fieldError(identifierError, "reg-email-err")}
              </div>
            ) : (
              <div className="auth-field">
                <label htmlFor="reg-phone" className="auth-label">
                  <Trans>Mobile number</Trans>
                </label>
                <div className="auth-phone">
                  <select className="auth-select" aria-label={t`Country code`} value={dial} onChange={(e) => setDial(e.target.value)} data-testid="country-code">
                    {COUNTRIES.map((c) => (
                      <option key={c.iso} value={c.dial}>
                        {`${countryName(c.iso, i18n.locale)} +${c.dial}`}
                      </option>
                    ))}
                  </select>
                  <input
                    id="reg-phone"
                    className="auth-input"
                    type="tel"
                    name="phone"
                    autoComplete="tel-national"
                    inputMode="tel"
                    value={national}
                    onChange={(e) => setNational(e.target.value)}
                    aria-invalid={(tried && !!identifierError) || undefined}
                    aria-describedby="reg-phone-err"
                  />
                </div>
                {fieldError(identifierError, "reg-phone-err")}
              </div>
            )}
            <div className="auth-field">
              <label htmlFor="reg-password" className="auth-label">
                <Trans>Password</Trans>
              </label>
              <input
                id="reg-password"
                className="auth-input"
                type="password"
                name="password"
                autoComplete="new-password"
                maxLength={15}
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                aria-invalid={(tried && broken.length > 0) || undefined}
                aria-describedby="password-rules"
              />
              <PasswordRules broken={broken} reported={reported} touched={tried} />
            </div>
            <div className="auth-field">
              <label htmlFor="reg-confirm" className="auth-label">
                <Trans>Confirm password</Trans>
              </label>
              <input
                id="reg-confirm"
                className="auth-input"
                type="password"
                name="confirm"
                autoComplete="new-password"
                maxLength={15}
                value={confirm}
                onChange={(e) => setConfirm(e.target.value)}
                aria-invalid={(tried && !!confirmError) || undefined}
                aria-describedby="reg-confirm-err"
              />
              {fieldError(confirmError, "reg-confirm-err")}
            </div>
            <div className="auth-field">
              <label htmlFor="reg-referral" className="auth-label">
                <Trans>Referral code (optional)</Trans>
              </label>
              <input
                id="reg-referral"
                className="auth-input"
                type="text"
                name="referral_code"
                autoComplete="off"
                value={referral}
                onChange={(e) => setReferral(e.target.value)}
                aria-describedby="reg-referral-err"
              />
              {fieldError(referralError, "reg-referral-err")}
            </div>
            <div className="auth-field auth-field--check">
              <label htmlFor="reg-terms">
                <input id="reg-terms" type="checkbox" checked={terms} onChange={(e) => setTerms(e.target.checked)} aria-describedby="reg-terms-err" />
                <Trans>I have read and agree to the Terms of Use</Trans>
              </label>
              {fieldError(termsError, "reg-terms-err")}
            </div>
            <div className="auth-actions">
              <button type="submit" className="button button--primary" disabled={busy} data-testid="register-submit">
                <Trans>Sign Up</Trans>
              </button>
            </div>
          </form>
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
