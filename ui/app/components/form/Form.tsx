import { zodResolver } from "@hookform/resolvers/zod";
import { useLingui } from "@lingui/react/macro";
import type { ReactNode } from "react";
import { FormProvider, useForm, type FieldValues, type Path, type UseFormProps, type UseFormReturn } from "react-hook-form";
import type { z } from "zod";
import { ApiError, errorText, fieldErrors } from "~/lib/errors";

// A react-hook-form form validated by a zod schema. Errors show once a field
// has been left (then update as the user types) and on submit; every broken
// rule of a field is kept (criteriaMode "all"), so a password shows each
// rule it misses.
export function useZodForm<S extends z.ZodType<FieldValues, FieldValues>>(
  schema: S,
  options?: Omit<UseFormProps<z.input<S>, unknown, z.output<S>>, "resolver">,
): UseFormReturn<z.input<S>, unknown, z.output<S>> {
  return useForm<z.input<S>, unknown, z.output<S>>({
    mode: "onTouched",
    criteriaMode: "all",
    ...options,
    resolver: zodResolver(schema),
  });
}

// Puts a failed submit on the form: the problem's errors[] go to the fields
// they name (the last part of the location, "body.email" → email) when the
// form has such a field; the rest, and any other failure, becomes the form's
// own error (root.server), shown by <FormError>.
export function applySubmitError<T extends FieldValues>(
  form: UseFormReturn<T, unknown, unknown>,
  e: unknown,
  fallback: string,
): void {
  let placed = false;
  if (e instanceof ApiError) {
    const values = form.getValues() as Record<string, unknown>;
    for (const [name, message] of fieldErrors(e.problem)) {
      if (!(name in values)) continue;
      form.setError(name as Path<T>, { type: "server", message }, { shouldFocus: !placed });
      placed = true;
    }
    if (placed && e.problem.errors.every((x) => x.location && x.location.split(".").pop()! in values)) return;
  }
  form.setError("root.server", {
    type: "server",
    message: errorText(e, fallback),
  });
}

type FormProps<T extends FieldValues, O> = {
  form: UseFormReturn<T, unknown, O>;
  // Resolves when done; a rejection is shown on the form (applySubmitError).
  onSubmit: (values: O) => unknown;
  children: ReactNode;
  className?: string;
  "aria-label"?: string;
  "data-testid"?: string;
};

// <form> with the react-hook-form context for the <Field>s inside. The
// browser's own validation bubbles are off: the schema's messages show
// instead, in the page's language.
export function Form<T extends FieldValues, O>({ form, onSubmit, children, className, ...rest }: FormProps<T, O>) {
  const { t } = useLingui();
  const submit = form.handleSubmit(async (values) => {
    form.clearErrors("root.server");
    try {
      await onSubmit(values);
    } catch (e) {
      applySubmitError(form as unknown as UseFormReturn<T, unknown, unknown>, e, t`Network anomaly`);
    }
  });
  return (
    <FormProvider {...form}>
      <form
        noValidate
        className={className ?? "form"}
        onSubmit={(e) => void submit(e)}
        aria-label={rest["aria-label"]}
        data-testid={rest["data-testid"]}
      >
        {children}
      </form>
    </FormProvider>
  );
}
