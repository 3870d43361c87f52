import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { activateLocale } from "~/i18n";
import { ApiError, apiError } from "~/lib/errors";
import { emailSchema, passwordSchema, sameAs } from "~/lib/validation";
import { AppProviders } from "~/providers";
import { CheckboxField, Form, FormError, PasswordRules, SubmitButton, TextField, useZodForm } from ".";

const schema = z
  .object({
    email: emailSchema,
    password: passwordSchema,
    confirm: z.string(),
    terms: z.boolean(),
  })
  .superRefine(sameAs("password", "confirm"));

function SignUp({ onSubmit }: { onSubmit: (v: z.output<typeof schema>) => unknown }) {
  const form = useZodForm(schema, {
    defaultValues: { email: "", password: "", confirm: "", terms: false },
  });
  return (
    <Form form={form} onSubmit={onSubmit} aria-label="sign up">
      <TextField name="email" label="Email" type="email" description="We send a code there." required />
      <TextField name="password" label="Password" type="password" description={<PasswordRules name="password" />} />
      <TextField name="confirm" label="Confirm password" type="password" />
      <CheckboxField name="terms" label="I agree" />
      <FormError />
      <SubmitButton>Sign up</SubmitButton>
    </Form>
  );
}

function setup(onSubmit: (v: z.output<typeof schema>) => unknown = () => undefined) {
  render(
    <AppProviders>
      <SignUp onSubmit={onSubmit} />
    </AppProviders>,
  );
  return {
    email: screen.getByLabelText("Email") as HTMLInputElement,
    password: screen.getByLabelText("Password") as HTMLInputElement,
    confirm: screen.getByLabelText("Confirm password") as HTMLInputElement,
    submit: screen.getByRole("button", { name: "Sign up" }),
  };
}

function describedText(el: HTMLElement): string {
  return (el.getAttribute("aria-describedby") ?? "")
    .split(" ")
    .filter(Boolean)
    .map((id) => document.getElementById(id)?.textContent ?? "")
    .join(" | ");
}

describe("form kit", () => {
  it("labels the controls and links the description before any error", () => {
    const { email } = setup();
    expect(email.getAttribute("aria-invalid")).toBe("false");
    expect(email.getAttribute("aria-required")).toBe("true");
    expect(describedText(email)).toBe("We send a code there.");
  });

  it("shows every broken rule on submit, marks the fields invalid and does not submit", async () => {
    const onSubmit = vi.fn();
    const { email, password, confirm, submit } = setup(onSubmit);
    fireEvent.change(email, { target: { value: "not-an-email" } });
    fireEvent.change(password, { target: { value: "abc" } });
    fireEvent.change(confirm, { target: { value: "abd" } });
    fireEvent.click(submit);
    await waitFor(() => expect(email.getAttribute("aria-invalid")).toBe("true"));
    expect(describedText(email)).toBe("We send a code there. | The email address is not valid.");
    const pwErrors = describedText(password);
    for (const m of [
      "The password must be 6 to 15 characters long.",
      "The password must contain a number.",
      "The password must contain an uppercase letter.",
      "The password must contain a special character.",
    ]) {
      expect(pwErrors).toContain(m);
    }
    expect(describedText(confirm)).toBe("The passwords do not match.");
    expect(onSubmit).not.toHaveBeenCalled();
    // Focus goes to the first invalid field.
    expect(document.activeElement).toBe(email);
  });

  it("updates the checklist as the user types and clears errors once fixed", async () => {
    const { email, password, confirm, submit } = setup();
    fireEvent.change(password, { target: { value: "Abc" } });
    const rules = () => [...document.querySelectorAll(".password-rule")].map((li) => li.classList.contains("password-rule--ok"));
    expect(rules()).toEqual([false, false, true, true, false]);
    fireEvent.change(password, { target: { value: "Abc12!" } });
    expect(rules()).toEqual([true, true, true, true, true]);
    fireEvent.change(email, { target: { value: "" } });
    fireEvent.click(submit);
    await waitFor(() => expect(describedText(email)).toContain("Please enter a correct email address!"));
    fireEvent.change(email, { target: { value: "me@example.com" } });
    fireEvent.change(confirm, { target: { value: "Abc12!" } });
    await waitFor(() => expect(email.getAttribute("aria-invalid")).toBe("false"));
    expect(describedText(email)).toBe("We send a code there.");
  });

  it("shows the errors in Japanese after a language switch, without validating again", async () => {
    const { email, submit } = setup();
    fireEvent.change(email, { target: { value: "x" } });
    fireEvent.click(submit);
    await waitFor(() => expect(describedText(email)).toContain("The email address is not valid."));
    await act(() => activateLocale("ja"));
    await waitFor(() => expect(describedText(email)).not.toContain("The email address is not valid."));
    expect(describedText(email)).toMatch(/メール/);
  });

  it("submits parsed values and puts a problem's field errors on the fields", async () => {
    const onSubmit = vi.fn(async () => {
      throw apiError(
        "POST /api/v1/account",
        { status: 422, statusText: "Unprocessable Entity" },
        {
          title: "Unprocessable Entity",
          status: 422,
          detail: "validation failed",
          errors: [
            {
              location: "body.email",
              value: "me@example.com",
              message: "This email is already registered.",
            },
          ],
        },
      );
    });
    const { email, password, confirm, submit } = setup(onSubmit);
    fireEvent.change(email, { target: { value: "  me@example.com " } });
    fireEvent.change(password, { target: { value: "Abc12!" } });
    fireEvent.change(confirm, { target: { value: "Abc12!" } });
    fireEvent.click(submit);
    await waitFor(() => expect(describedText(email)).toContain("This email is already registered."));
    expect(onSubmit).toHaveBeenCalledWith({
      email: "me@example.com",
      password: "Abc12!",
      confirm: "Abc12!",
      terms: false,
    });
    expect(email.getAttribute("aria-invalid")).toBe("true");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("shows other failures as the form's error", async () => {
    let fail: unknown = new ApiError(503, "down", {
      title: "Service Unavailable",
      status: 503,
      detail: "Try again later.",
      errors: [],
    });
    const { email, password, confirm, submit } = setup(async () => {
      throw fail;
    });
    fireEvent.change(email, { target: { value: "me@example.com" } });
    fireEvent.change(password, { target: { value: "Abc12!" } });
    fireEvent.change(confirm, { target: { value: "Abc12!" } });
    fireEvent.click(submit);
    expect((await screen.findByRole("alert")).textContent).toBe("Try again later.");
    fail = new TypeError("Failed to fetch");
    fireEvent.click(submit);
    await waitFor(() => expect(screen.getByRole("alert").textContent).toBe("Network anomaly"));
  });
});
