import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import type { UiNode } from "@ory/client-fetch";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setKratosFetch } from "~/features/auth/kratos";
import {
  fakeKratos,
  flow,
  input,
  json,
  submit,
} from "~/features/auth/testing/kratos-fake";
import { renderAt } from "~/features/auth/testing/render";
import { queryClient } from "~/api/queries";
import { resetSession } from "~/lib/session";
import { DashboardScreen } from "./Dashboard";
import { resetMemberSync } from "./sync";
import { fakeApi, jsonResponse, member } from "./testing/fake-api";

const qr = "data:image/png;base64,iVBORw0KGgo=";

const passwordNodes = (): UiNode[] => [
  input("password", { type: "password", group: "password" }),
  submit("method", "password", "password"),
];

const totpSetupNodes = (): UiNode[] => [
  {
    type: "img",
    group: "totp",
    attributes: {
      node_type: "img",
      id: "totp_qr",
      src: qr,
      width: 256,
      height: 256,
    } as never,
    messages: [],
    meta: {},
  },
  {
    type: "text",
    group: "totp",
    attributes: {
      node_type: "text",
      id: "totp_secret_key",
      text: { id: 1050006, text: "JBSWY3DPEHPK3PXP", type: "info" },
    } as never,
    messages: [],
    meta: {},
  },
  input("totp_code", { group: "totp" }),
  submit("method", "totp", "totp"),
];

const lookupRegenerate = (): UiNode[] => [
  submit("lookup_secret_regenerate", "true", "lookup_secret"),
  submit("method", "lookup_secret", "lookup_secret"),
];

const lookupCodes = (): UiNode[] => [
  {
    type: "text",
    group: "lookup_secret",
    attributes: {
      node_type: "text",
      id: "lookup_secret_codes",
      text: {
        id: 1050015,
        text: "a1b2c3d4, e5f6g7h8",
        type: "info",
        context: {
          secrets: [
            { id: 1050009, text: "a1b2c3d4", type: "info" },
            { id: 1050009, text: "e5f6g7h8", type: "info" },
          ],
        },
      },
    } as never,
    messages: [],
    meta: {},
  },
  submit("lookup_secret_confirm", "true", "lookup_secret"),
];

const totpEnrolled = (): UiNode[] => [submit("totp_unlink", "true", "totp")];

beforeEach(() => {
  resetSession();
  resetMemberSync();
  queryClient.clear();
});
afterEach(() => {
  setKratosFetch(undefined);
  resetSession();
  document.getElementById("exhub-toasts")?.remove();
});

const toast = () => document.getElementById("exhub-toasts")?.textContent ?? "";

describe("security", () => {
  it("changes the password with the four rules and the confirmation, then shows the 24-hour lockout", async () => {
    // Kratos' settings hook records the lockout a moment after the change:
    // the first read after it still shows none.
    let changed = false;
    let readsAfter = 0;
    const until = new Date(Date.now() + 24 * 3600_000).toISOString();
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/security": () => {
        if (changed) readsAfter++;
        return jsonResponse(
          readsAfter >= 2
            ? { withdraw_locked: true, withdraw_locked_until: until }
            : { withdraw_locked: false },
        );
      },
    });
    const k = fakeKratos({
      "GET /self-service/settings/browser": () =>
        json(flow("S1", [...passwordNodes(), ...totpSetupNodes()])),
      "POST /self-service/settings": () => {
        changed = true;
        return json(
          flow("S1", [...passwordNodes(), ...totpSetupNodes()], {
            state: "success",
          }),
        );
      },
    });
    setKratosFetch(k.fetch);
    renderAt("/dashboard?page=security", { "/dashboard": DashboardScreen });
    const pw = await screen.findByLabelText("New password");
    expect(screen.queryByTestId("withdraw-lockout")).toBeNull();

    fireEvent.change(pw, { target: { value: "abc" } });
    fireEvent.click(screen.getByTestId("password-submit"));
    const rules = screen.getByTestId("password-rules");
    const shown = () =>
      [...rules.querySelectorAll("[data-shown-error=true]")].map((li) =>
        li.getAttribute("data-rule"),
      );
    await waitFor(() =>
      expect(shown()).toEqual(["length", "number", "uppercase", "special"]),
    );
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);

    fireEvent.change(pw, { target: { value: "Good1!xx" } });
    fireEvent.change(screen.getByLabelText("Confirm password"), {
      target: { value: "Good1!xy" },
    });
    fireEvent.click(screen.getByTestId("password-submit"));
    expect(await screen.findByText("The passwords do not match.")).toBeTruthy();
    expect(k.calls.filter((c) => c.method === "POST")).toHaveLength(0);

    fireEvent.change(screen.getByLabelText("Confirm password"), {
      target: { value: "Good1!xx" },
    });
    // The button is off while the previous (refused) submit finishes.
    await waitFor(() =>
      expect(
        (screen.getByTestId("password-submit") as HTMLButtonElement).disabled,
      ).toBe(false),
    );
    fireEvent.click(screen.getByTestId("password-submit"));
    await waitFor(() => expect(toast()).toBe("Modified successfully!"));
    expect(k.calls.find((c) => c.method === "POST")!.body).toEqual({
      method: "password",
      password: "Good1!xx",
      csrf_token: "csrf-S1",
    });
    const notice = await screen.findByTestId(
      "withdraw-lockout",
      {},
      { timeout: 10_000 },
    );
    expect(readsAfter).toBe(2);
    expect(notice.textContent).toContain("24 hours");
  });

  it("sets up Google Authenticator in five steps and stores the recovery codes once the app is on", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/security": () => jsonResponse({}),
    });
    // S1 is the page's settings flow; S2 holds the recovery codes (Kratos
    // forgets codes generated in a flow once that flow enables the app).
    const k = fakeKratos({
      "GET /self-service/settings/browser": [
        () =>
          json(
            flow("S1", [
              ...passwordNodes(),
              ...totpSetupNodes(),
              ...lookupRegenerate(),
            ]),
          ),
        () =>
          json(
            flow("S2", [
              ...passwordNodes(),
              ...totpSetupNodes(),
              ...lookupRegenerate(),
            ]),
          ),
      ],
      "POST /self-service/settings": (c) => {
        const b = c.body as Record<string, unknown>;
        const id = c.query.get("flow") ?? "";
        if (b.lookup_secret_regenerate)
          return json(
            flow(id, [
              ...passwordNodes(),
              ...totpSetupNodes(),
              ...lookupCodes(),
            ]),
          );
        if (b.method === "totp")
          return json(
            flow(
              id,
              [...passwordNodes(), ...totpEnrolled(), ...lookupRegenerate()],
              { state: "success" },
            ),
          );
        return json(
          flow(id, [...passwordNodes(), ...totpEnrolled()], {
            state: "success",
          }),
        );
      },
    });
    setKratosFetch(k.fetch);
    renderAt("/dashboard/security", { "/dashboard/security": DashboardScreen });
    const setup = await screen.findByTestId("totp-setup");
    expect(
      within(setup)
        .getAllByRole("listitem")
        .map((li) => li.textContent),
    ).toEqual([
      "1 Download app",
      "2 Scan QR code",
      "3 Save recovery key phrase",
      "4 User guide",
      "5 Enable",
    ]);
    fireEvent.click(screen.getByTestId("totp-next"));
    expect(screen.getByTestId("totp-qr").getAttribute("src")).toBe(qr);
    expect(screen.getByTestId("totp-secret").textContent).toBe(
      "JBSWY3DPEHPK3PXP",
    );
    fireEvent.click(screen.getByTestId("totp-next"));

    // Step 3: the codes are generated and must be marked saved before going on.
    fireEvent.click(screen.getByTestId("lookup-generate"));
    const codes = await screen.findByTestId("lookup-secrets");
    expect(
      within(codes)
        .getAllByRole("listitem")
        .map((li) => li.textContent),
    ).toEqual(["a1b2c3d4", "e5f6g7h8"]);
    expect(
      (screen.getByTestId("totp-next") as HTMLButtonElement).disabled,
    ).toBe(true);
    fireEvent.click(screen.getByTestId("lookup-saved"));
    fireEvent.click(screen.getByTestId("totp-next"));
    expect(screen.getByTestId("totp-step-4").textContent).toContain(
      "recovery codes",
    );
    fireEvent.click(screen.getByTestId("totp-next"));

    // Step 5: a code that is not 6 digits is refused before sending.
    fireEvent.change(screen.getByTestId("totp-code"), {
      target: { value: "12" },
    });
    fireEvent.click(screen.getByTestId("totp-enable"));
    expect(
      await screen.findByText(
        "Enter the 6-digit code from your authenticator app.",
      ),
    ).toBeTruthy();
    fireEvent.change(screen.getByTestId("totp-code"), {
      target: { value: "123456" },
    });
    fireEvent.click(screen.getByTestId("totp-enable"));
    await waitFor(() => expect(toast()).toBe("Setting successful!"));
    const posts = k.calls
      .filter((c) => c.method === "POST")
      .map((c) => ({ flow: c.query.get("flow"), body: c.body }));
    expect(posts).toEqual([
      {
        flow: "S2",
        body: {
          method: "lookup_secret",
          lookup_secret_regenerate: true,
          csrf_token: "csrf-S2",
        },
      },
      {
        flow: "S1",
        body: { method: "totp", totp_code: "123456", csrf_token: "csrf-S1" },
      },
      {
        flow: "S2",
        body: {
          method: "lookup_secret",
          lookup_secret_confirm: true,
          csrf_token: "csrf-S2",
        },
      },
    ]);
    expect(await screen.findByTestId("totp-enabled")).toBeTruthy();
  });

  it("shows the authenticator as on only once the recovery codes are stored, and retries a failed confirmation", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/security": () => jsonResponse({}),
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let confirms = 0;
    const k = fakeKratos({
      "GET /self-service/settings/browser": [
        () =>
          json(
            flow("S1", [
              ...passwordNodes(),
              ...totpSetupNodes(),
              ...lookupRegenerate(),
            ]),
          ),
        () =>
          json(
            flow("S2", [
              ...passwordNodes(),
              ...totpSetupNodes(),
              ...lookupRegenerate(),
            ]),
          ),
      ],
      "POST /self-service/settings": async (c) => {
        const b = c.body as Record<string, unknown>;
        const id = c.query.get("flow") ?? "";
        if (b.lookup_secret_regenerate)
          return json(
            flow(id, [
              ...passwordNodes(),
              ...totpSetupNodes(),
              ...lookupCodes(),
            ]),
          );
        if (b.method === "totp")
          return json(
            flow(
              id,
              [...passwordNodes(), ...totpEnrolled(), ...lookupRegenerate()],
              { state: "success" },
            ),
          );
        // The first confirmation waits, then fails; the second goes through.
        if (++confirms === 1) {
          await held;
          return json({ error: { code: 500, message: "boom" } }, 500);
        }
        return json(
          flow(id, [...passwordNodes(), ...totpEnrolled()], {
            state: "success",
          }),
        );
      },
    });
    setKratosFetch(k.fetch);
    renderAt("/dashboard/security", { "/dashboard/security": DashboardScreen });
    await screen.findByTestId("totp-setup");
    fireEvent.click(screen.getByTestId("totp-next"));
    fireEvent.click(screen.getByTestId("totp-next"));
    fireEvent.click(screen.getByTestId("lookup-generate"));
    await screen.findByTestId("lookup-secrets");
    fireEvent.click(screen.getByTestId("lookup-saved"));
    fireEvent.click(screen.getByTestId("totp-next"));
    fireEvent.click(screen.getByTestId("totp-next"));
    fireEvent.change(screen.getByTestId("totp-code"), {
      target: { value: "123456" },
    });
    fireEvent.click(screen.getByTestId("totp-enable"));

    // The app is on in Kratos, the codes' confirmation is still under way:
    // not shown as on yet.
    await waitFor(() => expect(confirms).toBe(1));
    expect(screen.queryByTestId("totp-enabled")).toBeNull();
    expect(screen.getByTestId("totp-setup")).toBeTruthy();

    release();
    const retry = await screen.findByTestId("lookup-retry");
    expect(screen.getByTestId("totp-setup").textContent).toContain(
      "Your recovery codes could not be saved, so the authenticator is not set up yet. Please try again.",
    );
    expect(
      within(screen.getByTestId("lookup-secrets"))
        .getAllByRole("listitem")
        .map((li) => li.textContent),
    ).toEqual(["a1b2c3d4", "e5f6g7h8"]);
    expect(screen.queryByTestId("totp-enabled")).toBeNull();
    expect(toast()).toBe("");

    fireEvent.click(retry);
    expect(await screen.findByTestId("totp-enabled")).toBeTruthy();
    expect(toast()).toBe("Setting successful!");
    expect(
      k.calls
        .filter(
          (c) =>
            c.method === "POST" &&
            (c.body as Record<string, unknown>).lookup_secret_confirm,
        )
        .map((c) => c.query.get("flow")),
    ).toEqual(["S2", "S2"]);
  });

  it("asks for new recovery codes when the confirmation's flow expired", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/security": () => jsonResponse({}),
    });
    let confirms = 0;
    const k = fakeKratos({
      "GET /self-service/settings/browser": [
        () =>
          json(
            flow("S1", [
              ...passwordNodes(),
              ...totpSetupNodes(),
              ...lookupRegenerate(),
            ]),
          ),
        () => json(flow("S2", [...passwordNodes(), ...lookupRegenerate()])),
        () => json(flow("S3", [...passwordNodes(), ...lookupRegenerate()])),
      ],
      "POST /self-service/settings": (c) => {
        const b = c.body as Record<string, unknown>;
        const id = c.query.get("flow") ?? "";
        if (b.lookup_secret_regenerate)
          return json(flow(id, [...passwordNodes(), ...lookupCodes()]));
        if (b.method === "totp")
          return json(
            flow(id, [...passwordNodes(), ...totpEnrolled()], {
              state: "success",
            }),
          );
        if (++confirms === 1)
          return json(
            { error: { id: "self_service_flow_expired", code: 410 } },
            410,
          );
        return json(
          flow(id, [...passwordNodes(), ...totpEnrolled()], {
            state: "success",
          }),
        );
      },
    });
    setKratosFetch(k.fetch);
    renderAt("/dashboard/security", { "/dashboard/security": DashboardScreen });
    await screen.findByTestId("totp-setup");
    fireEvent.click(screen.getByTestId("totp-next"));
    fireEvent.click(screen.getByTestId("totp-next"));
    fireEvent.click(screen.getByTestId("lookup-generate"));
    await screen.findByTestId("lookup-secrets");
    fireEvent.click(screen.getByTestId("lookup-saved"));
    fireEvent.click(screen.getByTestId("totp-next"));
    fireEvent.click(screen.getByTestId("totp-next"));
    fireEvent.change(screen.getByTestId("totp-code"), {
      target: { value: "123456" },
    });
    fireEvent.click(screen.getByTestId("totp-enable"));
    fireEvent.click(await screen.findByTestId("lookup-retry"));
    await screen.findByText(
      "These are new recovery codes: save them, then try again.",
    );
    expect(screen.getByTestId("lookup-secrets")).toBeTruthy();
    expect(screen.queryByTestId("totp-enabled")).toBeNull();
    fireEvent.click(screen.getByTestId("lookup-retry"));
    expect(await screen.findByTestId("totp-enabled")).toBeTruthy();
    expect(
      k.calls
        .filter(
          (c) =>
            c.method === "POST" &&
            (c.body as Record<string, unknown>).lookup_secret_confirm,
        )
        .map((c) => c.query.get("flow")),
    ).toEqual(["S2", "S3"]);
  });

  it("offers OTP reset only with both a mobile number and an email address bound", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/security": () => jsonResponse({}),
    });
    setKratosFetch(
      fakeKratos({
        "GET /self-service/settings/browser": () =>
          json(flow("S1", [...passwordNodes(), ...totpEnrolled()])),
      }).fetch,
    );
    renderAt("/dashboard?page=security", { "/dashboard": DashboardScreen });
    const why = await screen.findByTestId("otp-reset-unavailable");
    expect(why.textContent).toContain(
      "needs both a mobile number and an email address",
    );
    expect(screen.queryByTestId("otp-reset")).toBeNull();
  });

  it("resets OTP for a member with both bound: the authenticator is removed and set up again", async () => {
    fakeApi({
      "GET /api/v1/me": () =>
        jsonResponse({
          ...member,
          phone: "+819012345678",
          phone_verified: true,
        }),
      "GET /api/v1/me/security": () => jsonResponse({}),
    });
    const k = fakeKratos({
      "GET /self-service/settings/browser": () =>
        json(flow("S1", [...passwordNodes(), ...totpEnrolled()])),
      "POST /self-service/settings": () =>
        json(
          flow("S1", [...passwordNodes(), ...totpSetupNodes()], {
            state: "success",
          }),
        ),
    });
    setKratosFetch(k.fetch);
    renderAt("/dashboard?page=security", { "/dashboard": DashboardScreen });
    fireEvent.click(await screen.findByTestId("otp-reset"));
    expect(await screen.findByTestId("totp-setup")).toBeTruthy();
    expect(k.calls.find((c) => c.method === "POST")!.body).toEqual({
      method: "totp",
      totp_unlink: true,
      csrf_token: "csrf-S1",
    });
    expect(toast()).toBe("Setting successful!");
  });

  it("sends a member whose privileged window passed to Kratos' re-authentication", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/security": () => jsonResponse({}),
    });
    setKratosFetch(
      fakeKratos({
        "GET /self-service/settings/browser": () =>
          json(flow("S1", passwordNodes())),
        "POST /self-service/settings": () =>
          json(
            {
              error: { id: "session_refresh_required", code: 403 },
              redirect_browser_to:
                "http://localhost/.ory/self-service/login/browser?refresh=true",
            },
            403,
          ),
      }).fetch,
    );
    const assigned: string[] = [];
    const orig = window.location;
    Object.defineProperty(window, "location", {
      configurable: true,
      value: {
        ...orig,
        origin: orig.origin,
        assign: (u: string) => assigned.push(u),
      },
    });
    try {
      renderAt("/dashboard?page=security", { "/dashboard": DashboardScreen });
      fireEvent.change(await screen.findByLabelText("New password"), {
        target: { value: "Good1!xx" },
      });
      fireEvent.change(screen.getByLabelText("Confirm password"), {
        target: { value: "Good1!xx" },
      });
      fireEvent.click(screen.getByTestId("password-submit"));
      await waitFor(() =>
        expect(assigned).toEqual([
          "http://localhost/.ory/self-service/login/browser?refresh=true",
        ]),
      );
    } finally {
      Object.defineProperty(window, "location", {
        configurable: true,
        value: orig,
      });
    }
  });
});
