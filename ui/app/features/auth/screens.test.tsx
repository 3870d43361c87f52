import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setApiFetch } from "~/api/client";
import { REGISTER_ACCOUNT_KEY } from "~/lib/register";
import { resetSession } from "~/lib/session";
import { setKratosFetch } from "./kratos";
import { LoginScreen } from "./Login";
import { RegisterScreen } from "./Register";
import { VerificationScreen } from "./Verification";
import { RecoveryCodeScreen, RecoveryStartScreen } from "./Recovery";
import { fakeKratos, flow, input, json, loginNodes, submit } from "./testing/kratos-fake";
import { renderAt } from "./testing/render";

const member = { id: "m1", email: "a@b.co", email_verified: true, phone_verified: false, aal: "aal1", two_factor: { totp: false, lookup_secret: false } };

beforeEach(() => {
  resetSession();
  setApiFetch(async (req) => (new URL(req.url).pathname === "/api/v1/me" ? json(member) : json({}, 404)));
});
afterEach(() => {
  setKratosFetch(undefined);
  resetSession();
  document.getElementById("exhub-toasts")?.remove();
});

const where = () => screen.getByTestId("where").textContent;

async function fillLogin(id: string, pw: string) {
  fireEvent.change(await screen.findByLabelText("Email or mobile number"), { target: { value: id } });
  fireEvent.change(screen.getByLabelText("Password"), { target: { value: pw } });
}

describe("login", () => {
  it("says the credentials are wrong (4000006) and keeps the identifier", async () => {
    const k = fakeKratos({
      "GET /self-service/login/browser": () => json(flow("L1", loginNodes())),
      "POST /self-service/login": () =>
        json(flow("L1", loginNodes(), { messages: [{ id: 4000006, text: "The provided credentials are invalid", type: "error" }] }), 400),
    });
    setKratosFetch(k.fetch);
    renderAt("/login", { "/login": LoginScreen });
    await fillLogin("a@b.co", "Wrong1!x");
    fireEvent.click(screen.getByTestId("login-submit"));
    expect((await screen.findByRole("alert")).textContent).toBe("The account or password is wrong.");
    expect((screen.getByLabelText("Email or mobile number") as HTMLInputElement).value).toBe("a@b.co");
    expect((screen.getByLabelText("Password") as HTMLInputElement).value).toBe("");
    expect(k.calls[1]!.body).toMatchObject({ method: "password", identifier: "a@b.co", password: "Wrong1!x", csrf_token: "csrf-L1" });
  });

  it("asks for both fields before sending, puts Kratos' field messages on their field and sends the flow's hidden inputs", async () => {
    const nodes = loginNodes;
    const k = fakeKratos({
      "GET /self-service/login/browser": () => json(flow("L1", nodes())),
      "POST /self-service/login": () =>
        json(
          flow("L1", [
            input("identifier", { group: "default", messages: [{ id: 4000002, text: "Property identifier is missing.", type: "error", context: { property: "identifier" } } as never] }),
            ...nodes().slice(1),
          ]),
          400,
        ),
    });
    setKratosFetch(k.fetch);
    renderAt("/login", { "/login": LoginScreen });
    fireEvent.click(await screen.findByTestId("login-submit"));
    await waitFor(() => expect(screen.getAllByText("Please enter your email or mobile number and your password.")).toHaveLength(2));
    expect(screen.getByLabelText("Email or mobile number").getAttribute("aria-invalid")).toBe("true");
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);

    await fillLogin("a@b.co", "Good1!xx");
    fireEvent.click(screen.getByTestId("login-submit"));
    const field = screen.getByLabelText("Email or mobile number");
    await waitFor(() => expect(field.getAttribute("aria-invalid")).toBe("true"));
    const describedBy = field.getAttribute("aria-describedby")!.split(" ");
    expect(describedBy.map((id) => document.getElementById(id)?.textContent)).toContain("identifier is required.");
    expect(k.calls[1]!.body).toEqual({ method: "password", identifier: "a@b.co", password: "Good1!xx", csrf_token: "csrf-L1" });
  });

  it("signs in with 'stay logged in', says so and goes back to return_to", async () => {
    const k = fakeKratos({
      "GET /self-service/login/browser": () => json(flow("L1", loginNodes())),
      "POST /self-service/login": () => json({ session: { id: "s1" } }),
    });
    setKratosFetch(k.fetch);
    renderAt("/login?return_to=%2Fwallet%3Fpage%3Ddeposit", { "/login": LoginScreen });
    await fillLogin("a@b.co", "Good1!xx");
    fireEvent.click(screen.getByLabelText("Stay logged in for 5 days"));
    fireEvent.click(screen.getByTestId("login-submit"));
    await waitFor(() => expect(where()).toBe("/wallet?page=deposit"));
    expect(k.calls[1]!.headers.get("X-Exhub-Remember")).toBe("1");
    expect(document.getElementById("exhub-toasts")?.textContent).toBe("Login succeeded!");
  });

  it("ignores a return_to of another site", async () => {
    const k = fakeKratos({
      "GET /self-service/login/browser": () => json(flow("L1", loginNodes())),
      "POST /self-service/login": () => json({ session: { id: "s1" } }),
    });
    setKratosFetch(k.fetch);
    renderAt("/login?return_to=https%3A%2F%2Fevil.example%2F", { "/login": LoginScreen });
    await fillLogin("a@b.co", "Good1!xx");
    fireEvent.click(screen.getByTestId("login-submit"));
    await waitFor(() => expect(where()).toBe("/"));
    expect(k.calls[1]!.headers.get("X-Exhub-Remember")).toBeNull();
  });

  it("sends a member with 2FA to the second factor", async () => {
    setApiFetch(async () => json({ code: "aal2_required", status: 403 }, 403));
    const k = fakeKratos({
      "GET /self-service/login/browser": () => json(flow("L1", loginNodes())),
      "POST /self-service/login": () => json({ session: { id: "s1" } }),
    });
    setKratosFetch(k.fetch);
    renderAt("/login?return_to=%2Fhistory", { "/login": LoginScreen });
    await fillLogin("a@b.co", "Good1!xx");
    fireEvent.click(screen.getByTestId("login-submit"));
    await waitFor(() => expect(where()).toBe("/otpauth?return_to=%2Fhistory"));
  });

  it("says how long to wait when the gate rate-limits", async () => {
    const k = fakeKratos({
      "GET /self-service/login/browser": () => json(flow("L1", loginNodes())),
      "POST /self-service/login": () => json({ code: "rate_limited", status: 429, title: "Too Many Requests" }, 429, { "Retry-After": "30" }),
    });
    setKratosFetch(k.fetch);
    renderAt("/login", { "/login": LoginScreen });
    await fillLogin("a@b.co", "Good1!xx");
    fireEvent.click(screen.getByTestId("login-submit"));
    expect((await screen.findByRole("alert")).textContent).toBe("Too many attempts. Please try again in 30 s.");
  });

  it("starts a new flow when the flow expired or the CSRF token failed", async () => {
    const k = fakeKratos({
      "GET /self-service/login/browser": [() => json(flow("L1", loginNodes())), () => json(flow("L2", loginNodes())), () => json(flow("L3", loginNodes()))],
      "POST /self-service/login": [
        () => json({ error: { id: "self_service_flow_expired", code: 410 } }, 410),
        () => json({ error: { id: "security_csrf_violation", code: 403 } }, 403),
      ],
    });
    setKratosFetch(k.fetch);
    renderAt("/login", { "/login": LoginScreen });
    await fillLogin("a@b.co", "Good1!xx");
    fireEvent.click(screen.getByTestId("login-submit"));
    expect(await screen.findByText("This page expired. Please try again.")).toBeTruthy();
    await waitFor(() => expect(where()).toBe("/login?flow=L2"));
    fireEvent.click(screen.getByTestId("login-submit"));
    await waitFor(() => expect(where()).toBe("/login?flow=L3"));
    const posts = k.calls.filter((c) => c.method === "POST");
    expect(posts.map((c) => c.query.get("flow"))).toEqual(["L1", "L2"]);
    expect(posts[1]!.body).toMatchObject({ csrf_token: "csrf-L2" });
  });

  it("loads the flow of ?flow= and starts a new one when it is gone", async () => {
    const k = fakeKratos({
      "GET /self-service/login/flows": () => json({ error: { id: "self_service_flow_expired", code: 410 } }, 410),
      "GET /self-service/login/browser": () => json(flow("L9", loginNodes())),
    });
    setKratosFetch(k.fetch);
    renderAt("/login?flow=OLD", { "/login": LoginScreen });
    await waitFor(() => expect(where()).toBe("/login?flow=L9"));
    expect(k.calls[0]!.query.get("id")).toBe("OLD");
  });
});

const regNodes = () => [
  input("traits.email", { group: "default" }),
  input("password", { type: "password", group: "password" }),
  submit("method", "password", "password"),
];

describe("register", () => {
  it("checks the four password rules live, prefills the quick-register account and goes to the code step", async () => {
    localStorage.setItem(REGISTER_ACCOUNT_KEY, "new@b.co");
    const k = fakeKratos({
      "GET /self-service/registration/browser": () => json(flow("R1", regNodes())),
      "POST /self-service/registration": () =>
        json({ identity: { id: "i1" }, continue_with: [{ action: "show_verification_ui", flow: { id: "V1", verifiable_address: "new@b.co" } }] }),
    });
    setKratosFetch(k.fetch);
    renderAt("/regist", { "/regist": RegisterScreen });
    expect(((await screen.findByLabelText("Email")) as HTMLInputElement).value).toBe("new@b.co");
    const rules = () => Object.fromEntries([...screen.getByTestId("password-rules").querySelectorAll("li")].map((li) => [li.dataset.rule, li.dataset.ok]));
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "abc" } });
    expect(rules()).toEqual({ length: "false", number: "false", lowercase: "true", uppercase: "false", special: "false" });
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "Abc12!" } });
    expect(rules()).toEqual({ length: "true", number: "true", lowercase: "true", uppercase: "true", special: "true" });
    expect(screen.getByTestId("password-rules").textContent).toContain("The password must contain an uppercase letter.");

    // Terms and confirmation are required.
    fireEvent.click(screen.getByTestId("register-submit"));
    expect(await screen.findByText("The passwords do not match.")).toBeTruthy();
    expect(screen.getByText("Please agree to the Terms of Use.")).toBeTruthy();
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);

    fireEvent.change(screen.getByLabelText("Confirm password"), { target: { value: "Abc12!" } });
    fireEvent.change(screen.getByLabelText("Referral code (optional)"), { target: { value: "abcd12" } });
    fireEvent.click(screen.getByLabelText("I have read and agree to the Terms of Use"));
    fireEvent.click(screen.getByTestId("register-submit"));
    await waitFor(() => expect(where()).toBe("/otp?flow=V1"));
    expect(k.calls[1]!.body).toEqual({
      method: "password",
      csrf_token: "csrf-R1",
      password: "Abc12!",
      traits: { email: "new@b.co", terms: true, locale: "en-US", referral_code: "ABCD12" },
    });
    expect(document.getElementById("exhub-toasts")?.textContent).toBe("successfully registered!");
  });

  it("registers a mobile number with its country code", async () => {
    localStorage.setItem(REGISTER_ACCOUNT_KEY, "+81 90-1234-5678");
    const k = fakeKratos({
      "GET /self-service/registration/browser": () => json(flow("R1", regNodes())),
      "POST /self-service/registration": () => json({ identity: { id: "i1" } }),
    });
    setKratosFetch(k.fetch);
    renderAt("/regist", { "/regist": RegisterScreen });
    expect(((await screen.findByLabelText("Mobile number")) as HTMLInputElement).value).toBe("9012345678");
    expect((screen.getByTestId("country-code") as HTMLSelectElement).value).toBe("81");
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "Abc12!" } });
    fireEvent.change(screen.getByLabelText("Confirm password"), { target: { value: "Abc12!" } });
    fireEvent.click(screen.getByLabelText("I have read and agree to the Terms of Use"));
    fireEvent.click(screen.getByTestId("register-submit"));
    await waitFor(() => expect(where()).toBe("/"));
    expect((k.calls[1]!.body as { traits: unknown }).traits).toEqual({ phone: "+819012345678", terms: true, locale: "en-US" });
  });

  it("checks the mobile tab's number and puts Kratos' message for the number on that field", async () => {
    const phoneNodes = (messages: never[] = []) => [
      input("traits.phone", { group: "default", messages }),
      input("password", { type: "password", group: "password" }),
      submit("method", "password", "password"),
    ];
    const k = fakeKratos({
      "GET /self-service/registration/browser": () => json(flow("R1", phoneNodes())),
      "POST /self-service/registration": () =>
        json(flow("R1", phoneNodes([{ id: 4000001, text: '"+81123456" is not valid "tel"', type: "error", context: { reason: '"+81123456" is not valid "tel"' } } as never])), 400),
    });
    setKratosFetch(k.fetch);
    renderAt("/regist", { "/regist": RegisterScreen });
    fireEvent.click(await screen.findByTestId("tab-mobile"));
    fireEvent.change(screen.getByTestId("country-code"), { target: { value: "81" } });
    fireEvent.change(screen.getByLabelText("Mobile number"), { target: { value: "12" } });
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "Abc12!" } });
    fireEvent.change(screen.getByLabelText("Confirm password"), { target: { value: "Abc12!" } });
    fireEvent.click(screen.getByLabelText("I have read and agree to the Terms of Use"));
    fireEvent.click(screen.getByTestId("register-submit"));
    expect(await screen.findByText("The mobile number is not valid.")).toBeTruthy();
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);

    fireEvent.change(screen.getByLabelText("Mobile number"), { target: { value: "123456" } });
    fireEvent.click(screen.getByTestId("register-submit"));
    await waitFor(() => expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(1));
    expect((k.calls[1]!.body as { traits: { phone: string } }).traits.phone).toBe("+81123456");
    const field = screen.getByLabelText("Mobile number");
    await waitFor(() => expect(field.getAttribute("aria-invalid")).toBe("true"));
    expect(field.getAttribute("aria-describedby")!.split(" ").map((id) => document.getElementById(id)?.textContent)).toContain("The mobile number is not valid.");
    expect(screen.queryByText('"+81123456" is not valid "tel"')).toBeNull();
  });

  it("marks the rules the server's gate refused (422)", async () => {
    const k = fakeKratos({
      "GET /self-service/registration/browser": () => json(flow("R1", regNodes())),
      "POST /self-service/registration": () =>
        json({ status: 422, errors: [{ location: "body.password", value: "special", message: "needs a special character" }] }, 422, {
          "Content-Type": "application/problem+json",
        }),
    });
    setKratosFetch(k.fetch);
    renderAt("/regist", { "/regist": RegisterScreen });
    fireEvent.change(await screen.findByLabelText("Email"), { target: { value: "x@b.co" } });
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "Abc12!" } });
    fireEvent.change(screen.getByLabelText("Confirm password"), { target: { value: "Abc12!" } });
    fireEvent.click(screen.getByLabelText("I have read and agree to the Terms of Use"));
    fireEvent.click(screen.getByTestId("register-submit"));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toBe("The password does not meet the rules: The password must contain a special character.");
  });

  it("says an account exists (4000007)", async () => {
    const k = fakeKratos({
      "GET /self-service/registration/browser": () => json(flow("R1", regNodes())),
      "POST /self-service/registration": () =>
        json(flow("R1", regNodes(), { messages: [{ id: 4000007, text: "An account with the same identifier exists already.", type: "error" }] }), 400),
    });
    setKratosFetch(k.fetch);
    renderAt("/regist", { "/regist": RegisterScreen });
    fireEvent.change(await screen.findByLabelText("Email"), { target: { value: "x@b.co" } });
    fireEvent.change(screen.getByLabelText("Password"), { target: { value: "Abc12!" } });
    fireEvent.change(screen.getByLabelText("Confirm password"), { target: { value: "Abc12!" } });
    fireEvent.click(screen.getByLabelText("I have read and agree to the Terms of Use"));
    fireEvent.click(screen.getByTestId("register-submit"));
    expect(within(await screen.findByTestId("flow-messages")).getByRole("alert").textContent).toBe(
      "An account with this email or mobile number already exists.",
    );
  });
});

describe("verification", () => {
  it("asks for the address, then the code; resends to the address and verifies", async () => {
    const start = () => [input("email", { group: "code" }), submit("method", "code", "code")];
    const sent = (messages: never[] = []) => [
      input("code", { group: "code", messages }),
      submit("method", "code", "code"),
      submit("email", "ann@b.co", "code", { id: 1070008, text: "Resend code" }),
    ];
    const k = fakeKratos({
      "GET /self-service/verification/browser": () => json(flow("V1", start())),
      "POST /self-service/verification": [
        () => json(flow("V1", sent(), { state: "sent_email", messages: [{ id: 1080003, text: "An email containing a verification code has been sent.", type: "info" }] })),
        () => json(flow("V1", sent([{ id: 4070006, text: "The verification code is invalid or has already been used.", type: "error" } as never]), { state: "sent_email" })),
        () => json(flow("V1", sent(), { state: "sent_email", messages: [{ id: 1080003, text: "An email containing a verification code has been sent.", type: "info" }] })),
        () => json(flow("V1", [], { state: "passed_challenge" })),
      ],
    });
    setKratosFetch(k.fetch);
    renderAt("/otp", { "/otp": VerificationScreen });
    fireEvent.click(await screen.findByRole("button", { name: "Send code" }));
    expect(await screen.findByText("Please enter a correct email address!")).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Email"), { target: { value: "ann@b.co" } });
    fireEvent.click(screen.getByRole("button", { name: "Send code" }));
    const code = await screen.findByLabelText("Verification code");
    expect(screen.getByTestId("verification-hint").textContent).toBe("We sent a code to ann@b.co. Enter it below; it is valid for 30 minutes.");

    fireEvent.change(code, { target: { value: "111111" } });
    fireEvent.click(screen.getByRole("button", { name: "Verify" }));
    expect(await screen.findByText("The code is invalid, expired or already used. Please try again.")).toBeTruthy();
    expect(screen.getByLabelText("Verification code").getAttribute("aria-invalid")).toBe("true");

    fireEvent.click(screen.getByTestId("resend-code"));
    expect(await screen.findByText("A verification code has been sent. It is valid for 30 minutes.")).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Verification code"), { target: { value: "222222" } });
    fireEvent.click(screen.getByRole("button", { name: "Verify" }));
    await waitFor(() => expect(where()).toBe("/"));
    expect(document.getElementById("exhub-toasts")?.textContent).toBe("Your address has been verified.");
    expect(k.calls.filter((c) => c.method === "POST").map((c) => c.body)).toEqual([
      { method: "code", email: "ann@b.co", csrf_token: "csrf-V1" },
      { method: "code", code: "111111", csrf_token: "csrf-V1" },
      { method: "code", email: "ann@b.co", csrf_token: "csrf-V1" },
      { method: "code", code: "222222", csrf_token: "csrf-V1" },
    ]);
  });
});

describe("recovery, step A", () => {
  it("checks the address, sends it with the flow's hidden inputs and goes to step B", async () => {
    const nodes = () => [input("email", { group: "code" }), submit("method", "code", "code")];
    const k = fakeKratos({
      "GET /self-service/recovery/browser": () => json(flow("RA1", nodes())),
      "POST /self-service/recovery": () => json(flow("RA1", nodes(), { state: "sent_email" })),
    });
    setKratosFetch(k.fetch);
    renderAt("/forgotPassword_A", { "/forgotPassword_A": RecoveryStartScreen, "/forgotPassword_B": RecoveryCodeScreen });
    fireEvent.change(await screen.findByLabelText("Email"), { target: { value: "ann@" } });
    fireEvent.click(screen.getByRole("button", { name: "Send code" }));
    expect(await screen.findByText("The email address is not valid.")).toBeTruthy();
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);
    fireEvent.change(screen.getByLabelText("Email"), { target: { value: " ann@b.co " } });
    fireEvent.click(screen.getByRole("button", { name: "Send code" }));
    await waitFor(() => expect(where()).toBe("/forgotPassword_B?flow=RA1"));
    expect(k.calls.find((c) => c.method === "POST")!.body).toEqual({ method: "code", email: "ann@b.co", csrf_token: "csrf-RA1" });
  });
});

describe("recovery, step B", () => {
  it("asks for the code and shows Kratos' word on a wrong one", async () => {
    const nodes = (messages: never[] = []) => [input("code", { group: "code", messages }), submit("method", "code", "code")];
    const k = fakeKratos({
      "GET /self-service/recovery/flows": () => json(flow("RC1", nodes(), { state: "sent_email" })),
      "POST /self-service/recovery": () =>
        json(flow("RC1", nodes([{ id: 4060006, text: "The recovery code is invalid or has already been used. Please try again.", type: "error" } as never]), { state: "sent_email" }), 200),
    });
    setKratosFetch(k.fetch);
    renderAt("/forgotPassword_B?flow=RC1", { "/forgotPassword_B": RecoveryCodeScreen });
    fireEvent.change(await screen.findByLabelText("New password"), { target: { value: "New12!ab" } });
    fireEvent.change(screen.getByLabelText("Confirm password"), { target: { value: "New12!ab" } });
    fireEvent.click(screen.getByTestId("reset-submit"));
    expect(await screen.findByText("This field is required.")).toBeTruthy();
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);
    fireEvent.change(screen.getByLabelText("Verification code"), { target: { value: "999999" } });
    fireEvent.click(screen.getByTestId("reset-submit"));
    expect(await screen.findByText("The code is invalid, expired or already used. Please try again.")).toBeTruthy();
    expect(screen.getByLabelText("Verification code").getAttribute("aria-invalid")).toBe("true");
  });


  it("confirms the code, then sets the new password through the settings flow", async () => {
    const k = fakeKratos({
      "GET /self-service/recovery/flows": () => json(flow("RC1", [input("code", { group: "code" }), submit("method", "code", "code")], { state: "sent_email" })),
      "POST /self-service/recovery": () =>
        json(
          {
            error: { id: "browser_location_change_required", code: 422 },
            redirect_browser_to: "http://127.0.0.1:8080/dashboard/security?flow=S1",
          },
          422,
        ),
      "GET /self-service/settings/flows": () => json(flow("S1", [input("password", { type: "password", group: "password" }), submit("method", "password", "password")])),
      "POST /self-service/settings": () => json(flow("S1", [], { state: "success" })),
    });
    setKratosFetch(k.fetch);
    renderAt("/forgotPassword_B?flow=RC1", { "/forgotPassword_B": RecoveryCodeScreen });
    fireEvent.change(await screen.findByLabelText("Verification code"), { target: { value: "123456" } });
    fireEvent.change(screen.getByLabelText("New password"), { target: { value: "New12!ab" } });
    fireEvent.change(screen.getByLabelText("Confirm password"), { target: { value: "New12!ab" } });
    fireEvent.click(screen.getByTestId("reset-submit"));
    await waitFor(() => expect(where()).toBe("/"));
    const posts = k.calls.filter((c) => c.method === "POST");
    expect(posts[0]!.body).toEqual({ method: "code", code: "123456", csrf_token: "csrf-RC1" });
    expect(posts[1]!.query.get("flow")).toBe("S1");
    expect(posts[1]!.body).toEqual({ method: "password", password: "New12!ab", csrf_token: "csrf-S1" });
    expect(document.getElementById("exhub-toasts")?.textContent).toBe("Modified successfully!");
  });

  it("also takes Kratos' 200 answer (passed_challenge with continue_with show_settings_ui)", async () => {
    const k = fakeKratos({
      "GET /self-service/recovery/flows": () => json(flow("RC1", [input("code", { group: "code" }), submit("method", "code", "code")], { state: "sent_email" })),
      "POST /self-service/recovery": () =>
        json({
          ...flow("RC1", [], { state: "passed_challenge" }),
          continue_with: [{ action: "show_settings_ui", flow: { id: "S2", url: "http://127.0.0.1:8080/dashboard/security?flow=S2" } }],
        }),
      "GET /self-service/settings/flows": () => json(flow("S2", [input("password", { type: "password", group: "password" })])),
      "POST /self-service/settings": () => json(flow("S2", [], { state: "success" })),
    });
    setKratosFetch(k.fetch);
    renderAt("/forgotPassword_B?flow=RC1", { "/forgotPassword_B": RecoveryCodeScreen });
    fireEvent.change(await screen.findByLabelText("Verification code"), { target: { value: "123456" } });
    fireEvent.change(screen.getByLabelText("New password"), { target: { value: "New12!ab" } });
    fireEvent.change(screen.getByLabelText("Confirm password"), { target: { value: "New12!ab" } });
    fireEvent.click(screen.getByTestId("reset-submit"));
    await waitFor(() => expect(where()).toBe("/"));
    const posts = k.calls.filter((c) => c.method === "POST");
    expect(posts[1]!.query.get("flow")).toBe("S2");
  });
});

describe("second factor", () => {
  it("asks for six digits from the app, or a recovery code, before sending", async () => {
    const { OtpAuthScreen } = await import("./OtpAuth");
    const k = fakeKratos({
      "GET /self-service/login/browser": () =>
        json(flow("A1", [input("totp_code", { group: "totp" }), submit("method", "totp", "totp"), input("lookup_secret", { group: "lookup_secret" }), submit("method", "lookup_secret", "lookup_secret")])),
    });
    setKratosFetch(k.fetch);
    renderAt("/otpauth", { "/otpauth": OtpAuthScreen });
    fireEvent.change(await screen.findByLabelText("Authentication code"), { target: { value: "12" } });
    fireEvent.click(screen.getByRole("button", { name: "Verify" }));
    expect(await screen.findByText("Enter the 6-digit code from your authenticator app.")).toBeTruthy();
    fireEvent.click(screen.getByRole("tab", { name: "Recovery code" }));
    expect(screen.queryByText("Enter the 6-digit code from your authenticator app.")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Verify" }));
    expect(await screen.findByText("This field is required.")).toBeTruthy();
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);
  });

  it("takes a TOTP code or, on the other tab, a recovery code, then returns", async () => {
    const { OtpAuthScreen } = await import("./OtpAuth");
    const k = fakeKratos({
      "GET /self-service/login/browser": (c) => {
        expect(c.query.get("aal")).toBe("aal2");
        return json(
          flow("A1", [
            input("totp_code", { group: "totp", label: { id: 1010006, text: "Authentication code", type: "info" } }),
            submit("method", "totp", "totp", { id: 1010009, text: "Use Authenticator" }),
            input("lookup_secret", { group: "lookup_secret", label: { id: 1010007, text: "Backup recovery code", type: "info" } }),
            submit("method", "lookup_secret", "lookup_secret", { id: 1010010, text: "Use backup recovery code" }),
          ], { messages: [{ id: 1010004, text: "Please complete the second authentication challenge.", type: "info" }] }),
        );
      },
      "POST /self-service/login": [
        () => json(flow("A1", [input("totp_code", { group: "totp" }), submit("method", "totp", "totp"), input("lookup_secret", { group: "lookup_secret" }), submit("method", "lookup_secret", "lookup_secret")], { messages: [{ id: 4000008, text: "The provided authentication code is invalid", type: "error" }] }), 400),
        () => json({ session: { id: "s", authenticator_assurance_level: "aal2" } }),
      ],
    });
    setKratosFetch(k.fetch);
    renderAt("/otpauth?return_to=%2Fhistory", { "/otpauth": OtpAuthScreen });
    fireEvent.change(await screen.findByLabelText("Authentication code"), { target: { value: "000000" } });
    fireEvent.click(screen.getByRole("button", { name: "Verify" }));
    expect((await screen.findByRole("alert")).textContent).toBe("The authentication code is wrong. Please try again.");
    expect(k.calls[1]!.body).toEqual({ csrf_token: "csrf-A1", totp_code: "000000", method: "totp" });

    fireEvent.click(screen.getByRole("tab", { name: "Recovery code" }));
    expect(screen.queryByLabelText("Authentication code")).toBeNull();
    fireEvent.change(screen.getByLabelText("Recovery code"), { target: { value: "abcd1234" } });
    fireEvent.click(screen.getByRole("button", { name: "Verify" }));
    await waitFor(() => expect(where()).toBe("/history"));
    expect(k.calls[2]!.body).toEqual({ csrf_token: "csrf-A1", lookup_secret: "abcd1234", method: "lookup_secret" });
    expect(document.getElementById("exhub-toasts")?.textContent).toBe("Login succeeded!");
  });

  it("with refresh=true asks a signed-in member for a code again (Kratos' refresh flow) and goes back", async () => {
    const { OtpAuthScreen } = await import("./OtpAuth");
    const k = fakeKratos({
      "GET /self-service/login/browser": (c) => {
        expect(c.query.get("aal")).toBe("aal2");
        expect(c.query.get("refresh")).toBe("true");
        return json(flow("R1", [input("totp_code", { group: "totp" }), submit("method", "totp", "totp")], { requested_aal: "aal2" }));
      },
      "POST /self-service/login": () => json({ session: { id: "s", authenticator_assurance_level: "aal2" } }),
    });
    setKratosFetch(k.fetch);
    renderAt(`/otpauth?refresh=true&return_to=${encodeURIComponent("/wallet?page=withdraw")}`, { "/otpauth": OtpAuthScreen });
    fireEvent.change(await screen.findByLabelText("Authentication code"), { target: { value: "123456" } });
    fireEvent.click(screen.getByRole("button", { name: "Verify" }));
    await waitFor(() => expect(where()).toBe("/wallet?page=withdraw"));
    expect(k.calls[1]!.body).toEqual({ csrf_token: "csrf-R1", totp_code: "123456", method: "totp" });
    expect(document.getElementById("exhub-toasts")?.textContent).toBe("Code confirmed.");
  });
});

describe("bind password", () => {
  it("checks the new password before sending, puts Kratos' field message on the field, then saves", async () => {
    const { BindPasswordScreen } = await import("./Settings");
    const nodes = () => [input("password", { type: "password", group: "password" }), submit("method", "password", "password")];
    const k = fakeKratos({
      "GET /self-service/settings/browser": () => json(flow("S1", nodes())),
      "POST /self-service/settings": [
        () =>
          json(
            flow("S1", [
              input("password", {
                type: "password",
                group: "password",
                messages: [{ id: 4000999, text: "The password can not be used because it is too similar to the identifier.", type: "error" }],
              }),
              submit("method", "password", "password"),
            ]),
            400,
          ),
        () => json(flow("S1", [], { state: "success" })),
      ],
    });
    setKratosFetch(k.fetch);
    renderAt("/bindPsd", { "/bindPsd": BindPasswordScreen });
    const pw = await screen.findByLabelText("New password");
    fireEvent.change(pw, { target: { value: "abc" } });
    fireEvent.click(screen.getByTestId("bind-submit"));
    await waitFor(() => expect(pw.getAttribute("aria-invalid")).toBe("true"));
    expect(screen.getByTestId("password-rules").querySelector('[data-rule="uppercase"]')!.getAttribute("data-shown-error")).toBe("true");
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);

    fireEvent.change(pw, { target: { value: "Abc12!" } });
    fireEvent.change(screen.getByLabelText("Confirm password"), { target: { value: "Abc12!" } });
    fireEvent.click(screen.getByTestId("bind-submit"));
    const described = () => (pw.getAttribute("aria-describedby") ?? "").split(" ").map((id) => document.getElementById(id)?.textContent ?? "").join(" ");
    await waitFor(() => expect(described()).toMatch(/similar/));
    expect(pw.getAttribute("aria-invalid")).toBe("true");
    expect(screen.queryByTestId("flow-messages")).toBeNull();

    fireEvent.click(screen.getByTestId("bind-submit"));
    await waitFor(() => expect(where()).toBe("/"));
    expect(k.calls.filter((c) => c.method === "POST")[1]!.body).toEqual({ method: "password", password: "Abc12!", csrf_token: "csrf-S1" });
  });
});
