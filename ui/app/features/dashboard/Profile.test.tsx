import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { queryClient } from "~/api/queries";
import { setKratosFetch } from "~/features/auth/kratos";
import {
  fakeKratos,
  flow,
  input,
  json,
  submit,
} from "~/features/auth/testing/kratos-fake";
import { renderAt } from "~/features/auth/testing/render";
import { activateLocale } from "~/i18n";
import { resetSession } from "~/lib/session";
import { DashboardScreen } from "./Dashboard";
import { resetMemberSync } from "./sync";
import { fakeApi, jsonResponse, member } from "./testing/fake-api";

const lastLogin = { at: "2026-03-04T05:06:07Z", ip: "203.0.113.7" };
const profile = { ...member, last_login: lastLogin };

beforeEach(() => {
  resetSession();
  resetMemberSync();
  queryClient.clear();
  document.cookie = "exhub_csrf=tok-1; path=/";
});
afterEach(() => {
  setKratosFetch(undefined);
  resetSession();
  document.getElementById("exhub-toasts")?.remove();
  document.cookie =
    "exhub_csrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/";
});

const toast = () => document.getElementById("exhub-toasts")?.textContent ?? "";

describe("profile", () => {
  it("shows the user id, the last login's IP and time in the page's language, and copies the id", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/profile": () => jsonResponse(profile),
      "GET /api/v1/me/kyc": () =>
        jsonResponse({ state: "none", documents: [], exchanges: [] }),
    });
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, "clipboard", {
      configurable: true,
      value: { writeText },
    });
    renderAt("/dashboard?page=profile", { "/dashboard": DashboardScreen });
    const id = await screen.findByTestId("profile-id");
    await waitFor(() => expect(id.textContent).toBe(member.id));
    const last = await screen.findByTestId("profile-last-login");
    await waitFor(() => expect(last.textContent).toContain("203.0.113.7"));
    const when = new Intl.DateTimeFormat("en", {
      dateStyle: "medium",
      timeStyle: "medium",
    }).format(new Date(lastLogin.at));
    expect(last.textContent).toContain(when);
    fireEvent.click(screen.getByRole("button", { name: "Copy user ID" }));
    await waitFor(() => expect(toast()).toBe("Copy Successful"));
    expect(writeText).toHaveBeenCalledWith(member.id);
  });

  it("formats the last login in Japanese for a Japanese page", async () => {
    await activateLocale("ja");
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/profile": () => jsonResponse(profile),
      "GET /api/v1/me/kyc": () =>
        jsonResponse({ state: "none", documents: [], exchanges: [] }),
    });
    renderAt("/dashboard?page=profile", { "/dashboard": DashboardScreen });
    const last = await screen.findByTestId("profile-last-login");
    const when = new Intl.DateTimeFormat("ja", {
      dateStyle: "medium",
      timeStyle: "medium",
    }).format(new Date(lastLogin.at));
    await waitFor(() => expect(last.textContent).toContain(when));
  });

  it("changes the nickname with the CSRF header and says 'Modified successfully!'", async () => {
    let nickname = "Ann";
    const api = fakeApi({
      "GET /api/v1/me": () => jsonResponse({ ...member, nickname }),
      "GET /api/v1/me/profile": () => jsonResponse({ ...profile, nickname }),
      "PATCH /api/v1/me/profile": (c) => {
        nickname = (c.body as { nickname: string }).nickname;
        return jsonResponse({ ...profile, nickname });
      },
      "GET /api/v1/me/kyc": () =>
        jsonResponse({ state: "none", documents: [], exchanges: [] }),
    });
    renderAt("/dashboard?page=profile", { "/dashboard": DashboardScreen });
    const box = (await screen.findByLabelText("Nickname")) as HTMLInputElement;
    await waitFor(() => expect(box.value).toBe("Ann"));
    fireEvent.change(box, { target: { value: "   " } });
    fireEvent.click(screen.getByTestId("nickname-save"));
    expect(
      await screen.findByText("The nickname is 1 to 32 characters."),
    ).toBeTruthy();
    expect(api.calls.some((c) => c.method === "PATCH")).toBe(false);
    await waitFor(() =>
      expect(
        (screen.getByTestId("nickname-save") as HTMLButtonElement).disabled,
      ).toBe(false),
    );
    fireEvent.change(box, { target: { value: " Annie " } });
    fireEvent.click(screen.getByTestId("nickname-save"));
    await waitFor(() => expect(toast()).toBe("Modified successfully!"));
    const patch = api.calls.find((c) => c.method === "PATCH")!;
    expect(patch.body).toEqual({ nickname: "Annie" });
    expect(patch.headers.get("X-CSRF-Token")).toBe("tok-1");
    await waitFor(() => expect(box.value).toBe("Annie"));
  });

  it("binds a mobile number through the settings flow, then checks the code sent to it", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/profile": () => jsonResponse(profile),
      "GET /api/v1/me/kyc": () =>
        jsonResponse({ state: "none", documents: [], exchanges: [] }),
    });
    const traits = [
      input("traits.email", { group: "profile", value: member.email }),
      input("traits.nickname", { group: "profile", value: "Ann" }),
      input("traits.locale", { group: "profile", value: "en-US" }),
      input("traits.terms", {
        group: "profile",
        type: "checkbox",
        value: true,
      }),
      submit("method", "profile", "profile"),
    ];
    const verify = flow(
      "V1",
      [input("code", { group: "code" }), submit("method", "code", "code")],
      { state: "sent_email" },
    );
    const k = fakeKratos({
      "GET /self-service/settings/browser": () => json(flow("S1", traits)),
      "POST /self-service/settings": () =>
        json({
          ...flow("S1", traits, { state: "success" }),
          continue_with: [
            {
              action: "show_verification_ui",
              flow: { id: "V1", verifiable_address: "+819012345678" },
            },
          ],
        }),
      "GET /self-service/verification/flows": () => json(verify),
      "POST /self-service/verification": () =>
        json(flow("V1", [], { state: "passed_challenge" })),
    });
    setKratosFetch(k.fetch);
    renderAt("/dashboard?page=profile", { "/dashboard": DashboardScreen });
    const row = await screen.findByTestId("profile-phone");
    expect(within(row).getByTestId("profile-phone-value").textContent).toBe(
      "Not bound",
    );
    fireEvent.click(within(row).getByTestId("bind-phone"));
    const number = await screen.findByLabelText("New mobile number");
    fireEvent.change(screen.getByLabelText("Country code"), {
      target: { value: "81" },
    });
    fireEvent.change(number, { target: { value: "090-1234-5678" } });
    fireEvent.click(screen.getByTestId("bind-phone-submit"));
    const code = await screen.findByLabelText("Verification code");
    expect(
      k.calls.find(
        (c) => c.method === "POST" && c.path === "/self-service/settings",
      )!.body,
    ).toEqual({
      method: "profile",
      csrf_token: "csrf-S1",
      traits: {
        email: member.email,
        nickname: "Ann",
        locale: "en-US",
        terms: true,
        phone: "+819012345678",
      },
    });
    fireEvent.change(code, { target: { value: "123456" } });
    fireEvent.click(screen.getByTestId("verify-submit"));
    await waitFor(() => expect(toast()).toBe("Setting successful!"));
    expect(
      k.calls.find(
        (c) => c.method === "POST" && c.path === "/self-service/verification",
      )!.body,
    ).toMatchObject({ method: "code", code: "123456" });
  });

  it("checks a new mobile number and shows Kratos' word on it under the field", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/profile": () => jsonResponse(profile),
      "GET /api/v1/me/kyc": () =>
        jsonResponse({ state: "none", documents: [], exchanges: [] }),
    });
    const traits = (messages: never[] = []) => [
      input("traits.email", { group: "profile", value: member.email }),
      input("traits.phone", { group: "profile", messages }),
      submit("method", "profile", "profile"),
    ];
    const k = fakeKratos({
      "GET /self-service/settings/browser": () => json(flow("S1", traits())),
      "POST /self-service/settings": () =>
        json(
          flow(
            "S1",
            traits([
              {
                id: 4000001,
                text: '"+81123456" is not valid "tel"',
                type: "error",
                context: { reason: '"+81123456" is not valid "tel"' },
              } as never,
            ]),
          ),
          400,
        ),
    });
    setKratosFetch(k.fetch);
    renderAt("/dashboard?page=profile", { "/dashboard": DashboardScreen });
    const row = await screen.findByTestId("profile-phone");
    fireEvent.click(within(row).getByTestId("bind-phone"));
    const number = await screen.findByLabelText("New mobile number");
    fireEvent.change(screen.getByLabelText("Country code"), {
      target: { value: "81" },
    });
    fireEvent.change(number, { target: { value: "12" } });
    fireEvent.click(screen.getByTestId("bind-phone-submit"));
    expect(
      await screen.findByText("The mobile number is not valid."),
    ).toBeTruthy();
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);
    await waitFor(() =>
      expect(
        (screen.getByTestId("bind-phone-submit") as HTMLButtonElement).disabled,
      ).toBe(false),
    );
    fireEvent.change(screen.getByLabelText("New mobile number"), {
      target: { value: "123456" },
    });
    fireEvent.click(screen.getByTestId("bind-phone-submit"));
    await waitFor(() =>
      expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(1),
    );
    const field = screen.getByLabelText("New mobile number");
    await waitFor(() =>
      expect(field.getAttribute("aria-invalid")).toBe("true"),
    );
    expect(screen.getByText("The mobile number is not valid.")).toBeTruthy();
    expect(screen.queryByText('"+81123456" is not valid "tel"')).toBeNull();
  });
});
