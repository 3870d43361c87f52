import { Trans, useLingui } from "@lingui/react/macro";
import type { ReactNode } from "react";
import { Link } from "react-router";
import { PageTitle } from "~/components/PageTitle";
import "./auth.css";
import type { FlowResult, PasswordRule } from "./kratos";
import { useErrorIdText, usePasswordRuleText } from "./messages";

// The frame of every sign-in screen: title, heading and a card.
export function AuthLayout({ title, children, testId }: { title: string; children: ReactNode; testId?: string }) {
  return (
    <div className="page auth-page" data-testid={testId}>
      <PageTitle page={title} />
      <div className="auth-card">
        <h1>{title}</h1>
        {children}
      </div>
    </div>
  );
}

export function Loading() {
  return (
    <p className="auth-hint" aria-busy="true">
      <Trans>Loading…</Trans>
    </p>
  );
}

export function Alert({ children, kind = "error" }: { children: ReactNode; kind?: "error" | "info" | "success" }) {
  return (
    <ul className="auth-messages">
      <li className={`auth-message auth-message--${kind}`} role={kind === "error" ? "alert" : "status"}>
        {children}
      </li>
    </ul>
  );
}

// The password rules with their state; rules the gate reported are marked as errors.
export function PasswordRules({ broken, reported = [], touched }: { broken: PasswordRule[]; reported?: PasswordRule[]; touched: boolean }) {
  const text = usePasswordRuleText();
  const { t } = useLingui();
  const all: PasswordRule[] = ["length", "number", "lowercase", "uppercase", "special"];
  return (
    <ul className="auth-rules" aria-label={t`Password rules`} data-testid="password-rules" aria-live="polite">
      {all.map((r) => {
        const ok = !broken.includes(r);
        return (
          <li key={r} data-rule={r} data-ok={ok} data-shown-error={(touched || reported.includes(r)) && !ok}>
            {ok ? "✓ " : "• "}
            {text(r)}
          </li>
        );
      })}
    </ul>
  );
}

// What a failed submission or flow start says that is not a flow message.
export function ResultAlert({ result }: { result: FlowResult | null }) {
  const errorText = useErrorIdText();
  const rules = usePasswordRuleText();
  if (!result) return null;
  switch (result.kind) {
    case "rate_limited": {
      const s = result.retryAfter;
      return (
        <Alert>
          {s !== undefined ? (
            <Trans>Too many attempts. Please try again in {s} s.</Trans>
          ) : (
            <Trans>Too many attempts. Please try again later.</Trans>
          )}
        </Alert>
      );
    }
    case "policy":
      return (
        <Alert>
          <Trans>The password does not meet the rules:</Trans> {result.rules.map(rules).join(", ")}
        </Alert>
      );
    case "expired":
    case "csrf":
      return (
        <Alert kind="info">
          <Trans>This page expired. Please try again.</Trans>
        </Alert>
      );
    case "signed_in":
      return (
        <Alert kind="info">
          <Trans>You are already logged in.</Trans> <Link to="/">{<Trans>Back to home</Trans>}</Link>
        </Alert>
      );
    case "error":
      return <Alert>{result.status === 0 ? <Trans>Network anomaly</Trans> : errorText(result.id)}</Alert>;
    default:
      return null;
  }
}
