import { Trans, useLingui } from "@lingui/react/macro";
import type { ClipboardEvent, ReactNode } from "react";
import { useFormContext, type FieldValues, type Path, type UseFormReturn } from "react-hook-form";
import { z } from "zod";
import { mobileSchema, passwordRules } from "~/lib/validation";
import { COUNTRIES, countryName, toE164 } from "./countries";
import { Field, PasswordRules, TextField } from "./Field";
import "./form.css";

// A password rule code ("password.length"...): shown by the rule checklist,
// not listed again under the field.
export function isPasswordRuleCode(m: string): boolean {
  return passwordRules.some((r) => r.code === m);
}

// Marks the rules a server refused (the gate's 422: "length", "special"...)
// on a password field; the checklist shows them as errors.
export function setPasswordRuleErrors<T extends FieldValues>(
  form: Pick<UseFormReturn<T, unknown, unknown>, "setError">,
  name: Path<T>,
  rules: readonly string[],
): void {
  const codes = rules.map((r) => `password.${r}`).filter(isPasswordRuleCode);
  if (codes.length === 0) return;
  form.setError(
    name,
    {
      type: "server",
      message: codes[0],
      types: Object.fromEntries(codes.map((c) => [c, c])),
    },
    { shouldFocus: true },
  );
}

type NewPasswordProps = {
  password?: string;
  confirm?: string;
  label?: ReactNode;
  confirmLabel?: ReactNode;
};

// A new password with its live rule checklist and the confirmation. Use with
// passwordSchema and sameAs(password, confirm) in the form's schema.
export function NewPasswordFields({ password = "password", confirm = "confirm", label, confirmLabel }: NewPasswordProps) {
  return (
    <>
      <TextField
        name={password}
        label={label ?? <Trans>New password</Trans>}
        type="password"
        autoComplete="new-password"
        maxLength={15}
        description={<PasswordRules name={password} />}
        hideMessage={isPasswordRuleCode}
      />
      <TextField
        name={confirm}
        label={confirmLabel ?? <Trans>Confirm password</Trans>}
        type="password"
        autoComplete="new-password"
        maxLength={15}
      />
    </>
  );
}

type PhoneProps = {
  // The national number's field and the calling code's field (digits, "81").
  name?: string;
  dial?: string;
  label: ReactNode;
  testId?: string;
};

// A mobile number: the country calling code and the national number, one
// labelled field (the select has its own accessible name).
export function PhoneField({ name = "national", dial = "dial", label, testId = "country-code" }: PhoneProps) {
  const { t, i18n } = useLingui();
  const { register } = useFormContext();
  return (
    <Field name={name} label={label}>
      {(control) => (
        <div className="phone-field">
          <select className="input" aria-label={t`Country code`} data-testid={testId} {...register(dial)}>
            {COUNTRIES.map((c) => (
              <option key={c.iso} value={c.dial}>
                {`${countryName(c.iso, i18n.locale)} +${c.dial}`}
              </option>
            ))}
          </select>
          <input className="input" type="tel" inputMode="tel" autoComplete="tel-national" {...control} {...register(name)} />
        </div>
      )}
    </Field>
  );
}

const e164 = /^\+[1-9][0-9]{6,14}$/;

// The number PhoneField's two fields make, in E.164; reports on the
// national field (as a validation code) when it is empty or not a number.
// Use inside a superRefine of the form's schema.
export function checkPhone(dial: string, national: string, ctx: z.RefinementCtx, path: string = "national"): string | null {
  const r = mobileSchema.safeParse(national);
  if (!r.success) {
    ctx.addIssue({
      code: "custom",
      message: r.error.issues[0]?.message ?? "mobile.invalid",
      path: [path],
    });
    return null;
  }
  const phone = toE164(dial, national);
  if (!e164.test(phone)) {
    ctx.addIssue({ code: "custom", message: "mobile.invalid", path: [path] });
    return null;
  }
  return phone;
}

type CodeProps = {
  name?: string;
  label: ReactNode;
  // How many digits the code has; a paste keeps that many digits.
  length?: number;
  testId?: string;
  autoFocus?: boolean;
};

// A numeric one-time code: the numeric keyboard on phones, the code the
// browser offers from an SMS, and a pasted "123 456" or "123-456" taken as
// its digits.
export function CodeField({ name = "code", label, length = 6, testId, autoFocus }: CodeProps) {
  const { setValue, getFieldState, formState } = useFormContext();
  const onPaste = (e: ClipboardEvent<HTMLInputElement>) => {
    const digits = e.clipboardData.getData("text").replace(/\D/g, "").slice(0, length);
    if (digits === "") return;
    e.preventDefault();
    const { isTouched } = getFieldState(name, formState);
    setValue(name, digits, {
      shouldDirty: true,
      shouldValidate: isTouched || formState.isSubmitted,
    });
  };
  return (
    <TextField
      name={name}
      label={label}
      inputMode="numeric"
      autoComplete="one-time-code"
      maxLength={length}
      onPaste={onPaste}
      data-testid={testId}
      autoFocus={autoFocus}
      className="code-field"
    />
  );
}
