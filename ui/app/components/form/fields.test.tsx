import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { passwordSchema, requiredSchema, sameAs } from "~/lib/validation";
import { AppProviders } from "~/providers";
import { checkPhone, CodeField, Form, NewPasswordFields, PhoneField, setPasswordRuleErrors, SubmitButton, useZodForm } from ".";

function describedText(el: HTMLElement): string {
  return (el.getAttribute("aria-describedby") ?? "")
    .split(" ")
    .filter(Boolean)
    .map((id) => document.getElementById(id)?.textContent ?? "")
    .join(" | ");
}

const rules = () =>
  Object.fromEntries(
    [...screen.getByTestId("password-rules").querySelectorAll("li")].map((li) => [
      li.dataset.rule,
      `${li.dataset.ok}/${li.dataset.shownError}`,
    ]),
  );

const pwSchema = z.object({ password: passwordSchema, confirm: z.string() }).superRefine(sameAs("password", "confirm"));

function NewPassword({ onSubmit, refused }: { onSubmit: (v: z.output<typeof pwSchema>) => unknown; refused?: string[] }) {
  const form = useZodForm(pwSchema, {
    defaultValues: { password: "", confirm: "" },
  });
  return (
    <Form
      form={form}
      onSubmit={async (v) => {
        await onSubmit(v);
        if (refused) setPasswordRuleErrors(form, "password", refused);
      }}
    >
      <NewPasswordFields />
      <SubmitButton>Save</SubmitButton>
    </Form>
  );
}

describe("NewPasswordFields", () => {
  it("checks the rules live, marks the broken ones on submit without listing them twice, and checks the confirmation", async () => {
    const onSubmit = vi.fn();
    render(
      <AppProviders>
        <NewPassword onSubmit={onSubmit} />
      </AppProviders>,
    );
    const pw = screen.getByLabelText("New password");
    const confirm = screen.getByLabelText("Confirm password");
    expect(pw.getAttribute("autocomplete")).toBe("new-password");
    fireEvent.change(pw, { target: { value: "abc" } });
    expect(rules()).toEqual({
      length: "false/false",
      number: "false/false",
      lowercase: "true/false",
      uppercase: "false/false",
      special: "false/false",
    });
    fireEvent.change(confirm, { target: { value: "abd" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(pw.getAttribute("aria-invalid")).toBe("true"));
    expect(rules()).toEqual({
      length: "false/true",
      number: "false/true",
      lowercase: "true/false",
      uppercase: "false/true",
      special: "false/true",
    });
    // The field's description is the checklist; the rule texts are not repeated as field errors.
    expect(describedText(pw).match(/uppercase letter/g)).toHaveLength(1);
    expect(describedText(confirm)).toBe("The passwords do not match.");
    expect(onSubmit).not.toHaveBeenCalled();

    fireEvent.change(pw, { target: { value: "Abc12!" } });
    fireEvent.change(confirm, { target: { value: "Abc12!" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(onSubmit).toHaveBeenCalledWith({
        password: "Abc12!",
        confirm: "Abc12!",
      }),
    );
    expect(pw.getAttribute("aria-invalid")).toBe("false");
  });

  it("marks the rules a server refused", async () => {
    render(
      <AppProviders>
        <NewPassword onSubmit={() => undefined} refused={["special", "bogus"]} />
      </AppProviders>,
    );
    fireEvent.change(screen.getByLabelText("New password"), {
      target: { value: "Abc12!" },
    });
    fireEvent.change(screen.getByLabelText("Confirm password"), {
      target: { value: "Abc12!" },
    });
    expect(rules().special).toBe("true/false");
    // Every rule passes here; the server's word marks the one it refused.
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(rules().special).toBe("false/true"));
    expect(rules().length).toBe("true/false");
    expect(screen.getByLabelText("New password").getAttribute("aria-invalid")).toBe("true");
    // Typing again checks the password anew.
    fireEvent.change(screen.getByLabelText("New password"), {
      target: { value: "Abc12!?" },
    });
    await waitFor(() => expect(rules().special).toBe("true/false"));
  });
});

const phoneSchema = z.object({ dial: z.string(), national: z.string() }).transform((v, ctx) => ({
  phone: checkPhone(v.dial, v.national, ctx) ?? z.NEVER,
}));

function Phone({ onSubmit }: { onSubmit: (v: { phone: string }) => unknown }) {
  const form = useZodForm(phoneSchema, {
    defaultValues: { dial: "81", national: "" },
  });
  return (
    <Form form={form} onSubmit={onSubmit}>
      <PhoneField label="Mobile number" />
      <SubmitButton>Send</SubmitButton>
    </Form>
  );
}

describe("PhoneField", () => {
  it("labels the number, offers the calling codes and gives E.164", async () => {
    const onSubmit = vi.fn();
    render(
      <AppProviders>
        <Phone onSubmit={onSubmit} />
      </AppProviders>,
    );
    const input = screen.getByLabelText("Mobile number");
    const select = screen.getByRole("combobox", {
      name: "Country code",
    }) as HTMLSelectElement;
    expect(select.value).toBe("81");
    expect(input.getAttribute("type")).toBe("tel");
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(describedText(input)).toBe("Please enter a correct mobile number!"));
    fireEvent.change(input, { target: { value: "12" } });
    await waitFor(() => expect(describedText(input)).toBe("The mobile number is not valid."));
    fireEvent.change(select, { target: { value: "44" } });
    fireEvent.change(input, { target: { value: "07700 900123" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(onSubmit).toHaveBeenCalledWith({ phone: "+447700900123" }));
    expect(input.getAttribute("aria-invalid")).toBe("false");
  });
});

const codeSchema = z.object({
  code: requiredSchema.regex(/^\d{6}$/, "code.totp"),
});

function Code({ onSubmit }: { onSubmit: (v: z.output<typeof codeSchema>) => unknown }) {
  const form = useZodForm(codeSchema, { defaultValues: { code: "" } });
  return (
    <Form form={form} onSubmit={onSubmit}>
      <CodeField label="Authentication code" testId="code" />
      <SubmitButton>Verify</SubmitButton>
    </Form>
  );
}

describe("CodeField", () => {
  it("asks for the numeric keyboard and keeps the digits of a pasted code", async () => {
    const onSubmit = vi.fn();
    render(
      <AppProviders>
        <Code onSubmit={onSubmit} />
      </AppProviders>,
    );
    const input = screen.getByLabelText("Authentication code") as HTMLInputElement;
    expect(input.getAttribute("inputmode")).toBe("numeric");
    expect(input.getAttribute("autocomplete")).toBe("one-time-code");
    expect(input.maxLength).toBe(6);
    fireEvent.paste(input, { clipboardData: { getData: () => " 123-456 7" } });
    expect(input.value).toBe("123456");
    fireEvent.click(screen.getByRole("button", { name: "Verify" }));
    await waitFor(() => expect(onSubmit).toHaveBeenCalledWith({ code: "123456" }));
  });

  it("says what is wrong with a short code", async () => {
    render(
      <AppProviders>
        <Code onSubmit={() => undefined} />
      </AppProviders>,
    );
    const input = screen.getByLabelText("Authentication code");
    fireEvent.change(input, { target: { value: "123" } });
    fireEvent.click(screen.getByRole("button", { name: "Verify" }));
    await waitFor(() => expect(describedText(input)).toBe("Enter the 6-digit code from your authenticator app."));
  });
});
