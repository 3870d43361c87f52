import { fireEvent, render, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { activateLocale } from "~/i18n";
import { AppProviders } from "~/providers";
import { FlowForm, FlowMessages, toBody } from "./FlowForm";
import { flow, input, submit } from "./testing/kratos-fake";

const qr = "data:image/png;base64,iVBORw0KGgo=";

const totpFlow = () =>
  flow("S1", [
    { type: "img", group: "totp", attributes: { node_type: "img", id: "totp_qr", src: qr, width: 256, height: 256 } as never, messages: [], meta: { label: { id: 1050005, text: "Authenticator app QR code", type: "info" } } },
    {
      type: "text",
      group: "totp",
      attributes: { node_type: "text", id: "totp_secret_key", text: { id: 1050006, text: "JBSWY3DPEHPK3PXP", type: "info" } } as never,
      messages: [],
      meta: { label: { id: 1050017, text: "This is your authenticator app secret. Use it if you can not scan the QR code.", type: "info" } },
    },
    input("totp_code", { group: "totp", label: { id: 1070006, text: "Verify code", type: "info" } }),
    submit("method", "totp", "totp", { id: 1070003, text: "Save" }),
    {
      type: "text",
      group: "lookup_secret",
      attributes: {
        node_type: "text",
        id: "lookup_secret_codes",
        text: { id: 1050015, text: "a1b2c3d4, e5f6g7h8", type: "info", context: { secrets: [{ id: 1050009, text: "a1b2c3d4", type: "info" }, { id: 1050014, text: "Secret was used at 2026-11-25", type: "info", context: { used_at: "2026-11-25" } }] } },
      } as never,
      messages: [],
      meta: {},
    },
    input("password", { type: "password", group: "password" }),
  ]);

describe("FlowForm", () => {
  it("renders the TOTP QR image, the secret, the code input and the csrf token, and only the chosen groups", () => {
    const onSubmit = vi.fn();
    const { container } = render(
      <AppProviders>
        <FlowForm flow={totpFlow()} groups={["totp"]} onSubmit={onSubmit} />
      </AppProviders>,
    );
    const img = screen.getByTestId("totp-qr") as HTMLImageElement;
    expect(img.getAttribute("src")).toBe(qr);
    expect(img.alt).toBe("Authenticator app QR code");
    expect(screen.getByTestId("totp-secret").textContent).toBe("JBSWY3DPEHPK3PXP");
    expect(screen.getByText("This is your authenticator secret. Use it if you cannot scan the QR code.")).toBeTruthy();
    expect((container.querySelector('input[name="csrf_token"]') as HTMLInputElement).value).toBe("csrf-S1");
    expect(container.querySelector('input[name="password"]')).toBeNull();
    expect(screen.queryByTestId("lookup-secrets")).toBeNull();

    fireEvent.change(screen.getByLabelText("Verify code"), { target: { value: "123456" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(onSubmit).toHaveBeenCalledWith({ csrf_token: "csrf-S1", totp_code: "123456", method: "totp" });
  });

  it("lists the recovery codes", () => {
    render(
      <AppProviders>
        <FlowForm flow={totpFlow()} groups={["lookup_secret"]} onSubmit={() => undefined} />
      </AppProviders>,
    );
    // A code already used shows when it was used.
    expect(within(screen.getByTestId("lookup-secrets")).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["a1b2c3d4", "Used at 2026-11-25"]);
  });

  it("refuses a QR image that is not a data image", () => {
    const f = flow("S2", [{ type: "img", group: "totp", attributes: { node_type: "img", id: "totp_qr", src: "https://evil.example/x.png", width: 1, height: 1 } as never, messages: [], meta: {} }]);
    render(
      <AppProviders>
        <FlowForm flow={f} onSubmit={() => undefined} />
      </AppProviders>,
    );
    expect(screen.queryByTestId("totp-qr")).toBeNull();
  });

  it("shows Kratos' messages translated in English and Japanese, and unknown ids as Kratos wrote them", async () => {
    const f = flow("L1", [], {
      messages: [
        { id: 4000006, text: "The provided credentials are invalid, check for spelling mistakes", type: "error" },
        { id: 4000010, text: "Account not active yet.", type: "error" },
        { id: 4000007, text: "An account with the same identifier exists already.", type: "error" },
        { id: 4060006, text: "The recovery code is invalid or has already been used.", type: "error" },
        { id: 4000032, text: "The password must be at least 6 characters long, but got 3.", type: "error", context: { min_length: 6, actual_length: 3 } } as never,
        { id: 1010004, text: "Please complete the second authentication challenge.", type: "info" },
        { id: 9999999, text: "Something new from Kratos.", type: "info" },
      ],
    });
    const { unmount } = render(
      <AppProviders>
        <FlowMessages flow={f} />
      </AppProviders>,
    );
    const texts = () => [...document.querySelectorAll("[data-message-id]")].map((e) => e.textContent);
    expect(texts()).toEqual([
      "The account or password is wrong.",
      "This account is not verified yet. Please verify your email address.",
      "An account with this email or mobile number already exists.",
      "The code is invalid, expired or already used. Please try again.",
      "Must be at least 6 characters long.",
      "Please complete the second authentication challenge.",
      "Something new from Kratos.",
    ]);
    expect(screen.getAllByRole("alert")).toHaveLength(5);
    unmount();
    await activateLocale("ja");
    render(
      <AppProviders>
        <FlowMessages flow={f} />
      </AppProviders>,
    );
    expect(texts().slice(0, 2)).toEqual(["アカウントまたはパスワードが正しくありません。", "このアカウントはまだ認証されていません。メールアドレスを認証してください。"]);
    expect(texts()[4]).toBe("6文字以上で入力してください。");
  });

  it("translates Kratos' format failures without an id of their own: a mobile number, an email address, others", async () => {
    const f = flow("R1", [], {
      messages: [
        { id: 4000001, text: '"+12" is not valid "tel"', type: "error", context: { reason: '"+12" is not valid "tel"' } } as never,
        { id: 4000001, text: '"ann@" is not valid "email"', type: "error", context: { reason: '"ann@" is not valid "email"' } } as never,
        { id: 4000001, text: "something else", type: "error", context: { reason: "something else" } } as never,
        { id: 4000004, text: 'does not match pattern "^\\+[1-9][0-9]{6,14}$"', type: "error" },
        { id: 4000029, text: "must be equal to constant true", type: "error" },
        { id: 4000031, text: "The password can not be used because it is too similar to the identifier.", type: "error" },
        { id: 4000034, text: "The password has been found in data breaches and must no longer be used.", type: "error" },
      ],
    });
    const texts = () => [...document.querySelectorAll("[data-message-id]")].map((e) => e.textContent);
    const { unmount } = render(
      <AppProviders>
        <FlowMessages flow={f} />
      </AppProviders>,
    );
    expect(texts()).toEqual([
      "The mobile number is not valid.",
      "The email address is not valid.",
      "The value is not valid.",
      "The format is not valid.",
      "Please agree to the Terms of Use.",
      "The password is too similar to the account name.",
      "This password has appeared in a data breach and cannot be used.",
    ]);
    unmount();
    await activateLocale("ja");
    render(
      <AppProviders>
        <FlowMessages flow={f} />
      </AppProviders>,
    );
    // Every one translated: none is left as Kratos wrote it.
    const ja = texts();
    expect(ja).toHaveLength(7);
    for (const [i, text] of ja.entries()) expect(text, `message ${i}`).toMatch(/[\u3040-\u30ff\u4e00-\u9fff]/);
  });

  it("nests dotted names into Kratos' body", () => {
    expect(toBody({ "traits.email": "a@b.co", "traits.name.first": "A", password: "x", method: "password" })).toEqual({
      traits: { email: "a@b.co", name: { first: "A" } },
      password: "x",
      method: "password",
    });
  });
});
