import { msg } from "@lingui/core/macro";
import type { I18n, MessageDescriptor } from "@lingui/core";
import { z } from "zod";

// Reusable form rules (product spec section 5). A failed rule carries a
// message code, not text: the form kit translates the code in the page's
// current language when it shows the error, so a language switch re-renders
// the errors without validating again.
export const validationMessages = {
  required: msg`This field is required.`,
  "email.required": msg`Please enter a correct email address!`,
  "email.invalid": msg`The email address is not valid.`,
  "mobile.required": msg`Please enter a correct mobile number!`,
  "mobile.invalid": msg`The mobile number is not valid.`,
  "password.length": msg`The password must be 6 to 15 characters long.`,
  "password.number": msg`The password must contain a number.`,
  "password.lowercase": msg`The password must contain a lowercase letter.`,
  "password.uppercase": msg`The password must contain an uppercase letter.`,
  "password.special": msg`The password must contain a special character.`,
  "password.mismatch": msg`The passwords do not match.`,
  "code.email": msg`Enter the 4-digit code.`,
  "code.totp": msg`Enter the 6-digit code from your authenticator app.`,
  "login.missing": msg`Please enter your email or mobile number and your password.`,
  "terms.required": msg`Please agree to the Terms of Use.`,
  "nickname.length": msg`The nickname is 1 to 32 characters.`,
  "referral.invalid": msg`The referral code is 4 to 16 letters and digits.`,
} satisfies Record<string, MessageDescriptor>;

export type ValidationCode = keyof typeof validationMessages;

export function isValidationCode(s: string): s is ValidationCode {
  return Object.prototype.hasOwnProperty.call(validationMessages, s);
}

// The text of a validation message: codes are translated, anything else
// (a server's message, already in the user's language) is shown as it is.
export function validationText(i18n: I18n, message: string | undefined): string {
  if (!message) return "";
  return isValidationCode(message) ? i18n._(validationMessages[message]) : message;
}

export const PASSWORD_MIN = 6;
export const PASSWORD_MAX = 15;

// Each password rule with its own message, in the order the form lists them.
export const passwordRules: { code: ValidationCode; test: (s: string) => boolean }[] = [
  { code: "password.length", test: (s) => [...s].length >= PASSWORD_MIN && [...s].length <= PASSWORD_MAX },
  { code: "password.number", test: (s) => /\p{Nd}/u.test(s) },
  { code: "password.lowercase", test: (s) => /\p{Ll}/u.test(s) },
  { code: "password.uppercase", test: (s) => /\p{Lu}/u.test(s) },
  // Anything that is neither a letter, a digit nor white space.
  { code: "password.special", test: (s) => /[^\p{L}\p{Nd}\s]/u.test(s) },
];

// Which rules a password meets, for a live checklist under the field.
export function checkPassword(s: string): { code: ValidationCode; ok: boolean }[] {
  return passwordRules.map((r) => ({ code: r.code, ok: r.test(s) }));
}

// A new password: every rule that fails reports its own message.
export const passwordSchema = z.string().superRefine((s, ctx) => {
  for (const r of passwordRules) if (!r.test(s)) ctx.addIssue({ code: "custom", message: r.code });
});

// Checks that a confirmation field repeats another one; the mismatch is
// reported on the confirmation. Use as z.object({...}).superRefine(sameAs(...)).
export function sameAs<T extends Record<string, unknown>>(field: keyof T & string, confirm: keyof T & string) {
  return (v: T, ctx: z.RefinementCtx) => {
    if (v[field] !== v[confirm]) ctx.addIssue({ code: "custom", message: "password.mismatch", path: [confirm] });
  };
}

// A new password with its confirmation.
export const passwordPairSchema = z
  .object({ password: passwordSchema, confirm: z.string() })
  .superRefine(sameAs("password", "confirm"));

// Same shape as the browser's own type="email" check (one @, a dotted domain
// of letters, digits and hyphens), plus a length bound.
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

// An email address: empty asks for one, a malformed one is "not valid".
export const emailSchema = z
  .string()
  .trim()
  .superRefine((s, ctx) => {
    if (s === "") ctx.addIssue({ code: "custom", message: "email.required" });
    else if (s.length > 254 || !EMAIL.test(s)) ctx.addIssue({ code: "custom", message: "email.invalid" });
  });

// A mobile number as typed: digits with optional spaces, hyphens, dots or
// brackets and an optional leading +; 6 to 15 digits (E.164 allows 15). The
// parsed value is the digits only (with the + when given).
export const mobileSchema = z
  .string()
  .trim()
  .superRefine((s, ctx) => {
    if (s === "") {
      ctx.addIssue({ code: "custom", message: "mobile.required" });
      return;
    }
    const digits = s.replace(/[\s().-]/g, "");
    if (!/^\+?\d{6,15}$/.test(digits)) ctx.addIssue({ code: "custom", message: "mobile.invalid" });
  })
  .transform((s) => s.replace(/[\s().-]/g, ""));

// Verification codes: 4 digits by email or SMS, 6 from an authenticator app.
export const emailCodeSchema = z.string().trim().regex(/^\d{4}$/, "code.email");
export const totpCodeSchema = z.string().trim().regex(/^\d{6}$/, "code.totp");

// A required text field.
export const requiredSchema = z.string().trim().min(1, "required");
