import { useLingui } from "@lingui/react";
import { Trans, useLingui as useLinguiMacro } from "@lingui/react/macro";
import { useId, type InputHTMLAttributes, type ReactNode } from "react";
import { useFormContext, useFormState, useWatch, type FieldError } from "react-hook-form";
import { checkPassword, validationText } from "~/lib/validation";

// Every message of a field error (criteriaMode "all" keeps them per rule
// type, several per type when one type failed more than once), first one
// first, without repeats.
export function errorMessages(error: FieldError | undefined): string[] {
  if (!error) return [];
  const out: string[] = [];
  const add = (m: unknown) => {
    if (typeof m === "string" && m !== "" && !out.includes(m)) out.push(m);
    else if (Array.isArray(m)) m.forEach(add);
  };
  add(error.message);
  if (error.types) Object.values(error.types).forEach(add);
  return out;
}

function lookup(errors: Record<string, unknown>, name: string): FieldError | undefined {
  let cur: unknown = errors;
  for (const part of name.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur as FieldError | undefined;
}

// What a control inside <Field> spreads onto itself.
export type ControlProps = {
  id: string;
  "aria-invalid": boolean;
  "aria-describedby": string | undefined;
  "aria-required": boolean | undefined;
};

type FieldProps = {
  name: string;
  label: ReactNode;
  description?: ReactNode;
  required?: boolean;
  className?: string;
  // Messages the field does not list under itself because something else
  // shows them (a password's rule checklist); they still mark it invalid.
  hideMessage?: (message: string) => boolean;
  // The control; receives the ids and states to spread on it.
  children: (control: ControlProps) => ReactNode;
};

// A labelled form field: label, the control, an optional description and the
// field's error messages, tied together with aria-describedby; the control is
// aria-invalid while the field has an error. Messages are validation codes
// translated in the current language (or a server's text as it came).
export function Field({ name, label, description, required, className, hideMessage, children }: FieldProps) {
  const { i18n } = useLingui();
  const { errors } = useFormState({ name });
  const id = useId();
  const descId = description ? `${id}-desc` : undefined;
  const errId = `${id}-err`;
  const all = errorMessages(lookup(errors, name));
  const messages = all.filter((m) => !hideMessage?.(m)).map((m) => validationText(i18n, m));
  const invalid = all.length > 0;
  const describedBy = [descId, invalid ? errId : undefined].filter(Boolean).join(" ") || undefined;
  return (
    <div className={`field${invalid ? " field--invalid" : ""}${className ? ` ${className}` : ""}`}>
      <label htmlFor={id} className="field-label">
        {label}
      </label>
      {children({
        id,
        "aria-invalid": invalid,
        "aria-describedby": describedBy,
        "aria-required": required || undefined,
      })}
      {description ? (
        <div id={descId} className="field-description">
          {description}
        </div>
      ) : null}
      <div id={errId} className="field-error" aria-live="polite">
        {messages.length === 1 ? messages[0] : null}
        {messages.length > 1 ? (
          <ul>
            {messages.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        ) : null}
      </div>
    </div>
  );
}

type TextFieldProps = Omit<InputHTMLAttributes<HTMLInputElement>, "name" | "id" | "children"> & {
  name: string;
  label: ReactNode;
  description?: ReactNode;
  hideMessage?: (message: string) => boolean;
};

// A text input registered with the form (email, password, mobile, code...).
export function TextField({ name, label, description, required, className, hideMessage, ...input }: TextFieldProps) {
  const { register } = useFormContext();
  return (
    <Field
      name={name}
      label={label}
      description={description}
      required={required}
      className={className}
      hideMessage={hideMessage}
    >
      {(control) => <input className="input" type="text" {...input} {...control} {...register(name)} />}
    </Field>
  );
}

// A checkbox registered with the form (terms, stay logged in); the label
// sits beside the box.
export function CheckboxField({ name, label, description, required }: Omit<TextFieldProps, "type">) {
  const { register } = useFormContext();
  const { errors } = useFormState({ name });
  const { i18n } = useLingui();
  const id = useId();
  const messages = errorMessages(lookup(errors, name)).map((m) => validationText(i18n, m));
  const invalid = messages.length > 0;
  const ids = [description ? `${id}-desc` : "", invalid ? `${id}-err` : ""].filter(Boolean).join(" ");
  return (
    <div className={`field field--check${invalid ? " field--invalid" : ""}`}>
      <input
        type="checkbox"
        id={id}
        aria-invalid={invalid}
        aria-describedby={ids || undefined}
        aria-required={required || undefined}
        {...register(name)}
      />
      <label htmlFor={id} className="field-label">
        {label}
      </label>
      {description ? (
        <div id={`${id}-desc`} className="field-description">
          {description}
        </div>
      ) : null}
      <div id={`${id}-err`} className="field-error" aria-live="polite">
        {messages.join(" ")}
      </div>
    </div>
  );
}

// The password rules as a live checklist under a new-password field. A rule
// the field's errors name (the schema on submit, or the server's gate put
// there with setError) is marked as an error (data-shown-error).
export function PasswordRules({ name, id }: { name: string; id?: string }) {
  const { i18n } = useLingui();
  const { t } = useLinguiMacro();
  const value = useWatch({ name }) as string | undefined;
  const { errors } = useFormState({ name });
  const failed = errorMessages(lookup(errors, name));
  return (
    <ul className="password-rules" id={id} data-testid="password-rules" aria-label={t`Password rules`}>
      {checkPassword(value ?? "").map((r) => {
        // The server's word (a rule its gate refused) wins over the live check.
        const shown = failed.includes(r.code);
        const ok = r.ok && !shown;
        return (
          <li
            key={r.code}
            data-rule={r.code.replace("password.", "")}
            data-ok={ok}
            data-shown-error={shown}
            className={ok ? "password-rule password-rule--ok" : shown ? "password-rule password-rule--error" : "password-rule"}
          >
            <span aria-hidden="true">{ok ? "✓" : "•"}</span> {validationText(i18n, r.code)}
            {ok ? (
              <span className="visually-hidden">
                {" "}
                <Trans>(met)</Trans>
              </span>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}

// The form's own error (a failed submit), announced when it appears.
export function FormError() {
  const { errors } = useFormState();
  const message = (errors.root as Record<string, FieldError | undefined> | undefined)?.server?.message;
  if (!message) return null;
  return (
    <p className="form-error" role="alert">
      {message}
    </p>
  );
}

// The submit button: disabled while the submit runs.
export function SubmitButton({ children, className, testId }: { children: ReactNode; className?: string; testId?: string }) {
  const { isSubmitting } = useFormState();
  return (
    <button
      type="submit"
      className={className ?? "button button--primary"}
      disabled={isSubmitting}
      aria-busy={isSubmitting}
      data-testid={testId}
    >
      {children}
    </button>
  );
}
