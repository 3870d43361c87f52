import { useLingui } from "@lingui/react/macro";
import type { UiText } from "@ory/client-fetch";
import { validationText } from "~/lib/validation";
import type { PasswordRule } from "./kratos";

// Kratos speaks American English with numeric message ids; the screens show
// each id through Lingui. The ids are Kratos v1.3.1's (text/id.go of its
// source, where each block counts up from its first id). An id not listed
// keeps Kratos' own text.

export type Translate = (m: Pick<UiText, "id" | "text"> & { context?: object }) => string;

function ctx(m: { context?: object }, key: string): string {
  const v = (m.context as Record<string, unknown> | undefined)?.[key];
  return v === undefined || v === null ? "" : String(v);
}

// The JSON-schema format a generic validation message (4000001) names, e.g.
// `"+1" is not valid "tel"` -> "tel".
export function failedFormat(m: { text?: string; context?: object }): string | null {
  const reason = ctx(m, "reason") || m.text || "";
  return /is not valid "([a-z-]+)"\s*$/.exec(reason)?.[1] ?? null;
}

export function useKratosText(): Translate {
  const { t, i18n } = useLingui();
  return (m) => {
    switch (m.id) {
      // Login
      case 1010001:
      case 1010013:
      case 1010022:
        return t`Log In`;
      case 1010003:
        return t`Please confirm this action by verifying that it is you.`;
      case 1010004:
        return t`Please complete the second authentication challenge.`;
      case 1010005:
        return t`Verify`;
      case 1010006:
        return t`Authentication code`;
      case 1010007:
        return t`Recovery code`;
      case 1010009:
        return t`Use authenticator`;
      case 1010010:
        return t`Use a recovery code`;
      // Registration
      case 1040001:
      case 1040003:
        return t`Sign Up`;
      case 1040008:
        return t`Back`;
      // Settings
      case 1050001:
        return t`Setting successful!`;
      case 1050004:
        return t`Disable authenticator`;
      case 1050005:
        return t`Authenticator app QR code`;
      case 1050007:
        return t`Show recovery codes`;
      case 1050008:
        return t`Generate new recovery codes`;
      case 1050010:
        return t`These are your recovery codes. Keep them in a safe place.`;
      case 1050011:
        return t`I have saved my recovery codes`;
      case 1050014: {
        const used = ctx(m, "used_at");
        return t`Used at ${used}`;
      }
      case 1050016:
        return t`Disable recovery codes`;
      case 1050017:
        return t`This is your authenticator secret. Use it if you cannot scan the QR code.`;
      // Recovery
      case 1060001:
        return t`You have recovered your account. Please set a new password now.`;
      case 1060002:
      case 1060003:
        return t`If the address belongs to an account, a recovery code has been sent to it. It is valid for 30 minutes.`;
      // Labels
      case 1070001:
        return t`Password`;
      case 1070003:
        return t`Save`;
      case 1070004:
        return t`ID`;
      case 1070005:
        return t`Submit`;
      case 1070006:
        return t`Verify code`;
      case 1070007:
        return t`Email`;
      case 1070008:
        return t`Resend code`;
      case 1070009:
        return t`Continue`;
      case 1070010:
        return t`Recovery code`;
      case 1070011:
        return t`Verification code`;
      // Verification
      case 1080001:
      case 1080003:
        return t`A verification code has been sent. It is valid for 30 minutes.`;
      case 1080002:
        return t`Your address has been verified.`;
      // Validation
      case 4000001: {
        // A JSON-schema check without an id of its own (e.g. the "tel" and
        // "email" formats of the identity schema), or a request Kratos refused.
        const format = failedFormat(m);
        if (format === "tel") return validationText(i18n, "mobile.invalid");
        if (format === "email") return validationText(i18n, "email.invalid");
        return t`The value is not valid.`;
      }
      case 4000002: {
        const property = ctx(m, "property");
        return property ? t`${property} is required.` : t`This field is required.`;
      }
      case 4000003:
      case 4000032: {
        const min = ctx(m, "min_length");
        return t`Must be at least ${min} characters long.`;
      }
      case 4000004:
        return t`The format is not valid.`;
      case 4000005:
        return t`The password cannot be used.`;
      case 4000006:
      case 4000037:
        return t`The account or password is wrong.`;
      case 4000007:
      case 4000027:
      case 4000028:
        return t`An account with this email or mobile number already exists.`;
      case 4000008:
        return t`The authentication code is wrong. Please try again.`;
      case 4000009:
        return t`Please fill in the form correctly.`;
      case 4000010:
        return t`This account is not verified yet. Please verify your email address.`;
      case 4000011:
        return t`You have no authenticator set up.`;
      case 4000012:
        return t`This recovery code has already been used.`;
      case 4000014:
        return t`You have no recovery codes set up.`;
      case 4000016:
        return t`The recovery code is not valid.`;
      case 4000017:
      case 4000033: {
        const max = ctx(m, "max_length");
        return t`Must be at most ${max} characters long.`;
      }
      case 4000018:
      case 4000019:
      case 4000020:
      case 4000021:
      case 4000022:
      case 4000023:
      case 4000024:
      case 4000025:
      case 4000026:
        return t`The value is not valid.`;
      case 4000029:
      case 4000030:
        // The identity schema's only constant is the terms checkbox.
        return t`Please agree to the Terms of Use.`;
      case 4000031:
        return t`The password is too similar to the account name.`;
      case 4000034:
        return t`This password has appeared in a data breach and cannot be used.`;
      case 4000036:
        return t`Something went wrong. Please start again.`;
      // Flows
      case 4010001:
      case 4040001:
      case 4050001:
      case 4060005:
      case 4070005:
        return t`This page expired. Please try again.`;
      case 4010002:
      case 4010003:
      case 4010004:
      case 4010005:
      case 4010006:
        return t`Please fill in the form correctly.`;
      case 4010007:
      case 4060001:
      case 4070002:
        return t`This was already done. Please continue.`;
      case 4060002:
      case 4070003:
        return t`Something went wrong. Please start again.`;
      case 4060003:
      case 4060004:
      case 4060006:
      case 4070001:
      case 4070004:
      case 4070006:
      case 4010008:
      case 4040003:
        return t`The code is invalid, expired or already used. Please try again.`;
      case 5000001:
        return t`Something went wrong. Please try again later.`;
      default:
        return m.text;
    }
  };
}

// The gate's and the form's password rule messages (SPEC section 5), the
// same texts as every other password field (lib/validation).
export function usePasswordRuleText(): (r: PasswordRule) => string {
  const { i18n } = useLingui();
  return (r) => validationText(i18n, `password.${r}`);
}

// Names of Kratos' error ids (the /error page).
export function useErrorIdText(): (id: string | undefined, fallback?: string) => string {
  const { t } = useLingui();
  return (id, fallback) => {
    switch (id) {
      case "security_csrf_violation":
        return t`The request could not be verified. Please try again.`;
      case "self_service_flow_expired":
        return t`This page expired. Please try again.`;
      case "session_already_available":
        return t`You are already logged in.`;
      case "session_aal2_required":
        return t`Please complete the second authentication challenge.`;
      case "session_inactive":
      case "session_refresh_required":
        return t`Please log in again.`;
      case "self_service_flow_return_to_forbidden":
        return t`The page you came from is not allowed.`;
      case "browser_location_change_required":
        return t`Please continue in the page that opens.`;
      default:
        return fallback ? fallback : t`Something went wrong. Please try again later.`;
    }
  };
}
