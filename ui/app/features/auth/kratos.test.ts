import { afterEach, describe, expect, it } from "vitest";
import { classify, createFlow, REMEMBER_HEADER, setKratosFetch, submitFlow } from "./kratos";
import { fakeKratos, flow, json, loginNodes } from "./testing/kratos-fake";

afterEach(() => setKratosFetch(undefined));

describe("classify", () => {
  it("reads the gate's password rules from a 422 problem", async () => {
    const r = await classify(
      json(
        {
          title: "Unprocessable Entity",
          status: 422,
          errors: [
            { location: "body.password", value: "uppercase", message: "needs an uppercase letter" },
            { location: "body.password", value: "special|number", message: "needs a special character and a number" },
          ],
        },
        422,
        { "Content-Type": "application/problem+json" },
      ),
    );
    expect(r).toEqual({
      kind: "policy",
      rules: ["uppercase", "special", "number"],
      messages: ["needs an uppercase letter", "needs a special character and a number"],
    });
  });

  it("reads 429 with Retry-After in seconds or as a date", async () => {
    expect(await classify(json({ code: "rate_limited", status: 429 }, 429, { "Retry-After": "42" }))).toEqual({ kind: "rate_limited", retryAfter: 42 });
    const at = new Date(Date.now() + 120_000).toUTCString();
    const r = await classify(json({ code: "rate_limited" }, 429, { "Retry-After": at }));
    expect(r.kind).toBe("rate_limited");
    expect(r.kind === "rate_limited" && r.retryAfter! > 100 && r.retryAfter! <= 120).toBe(true);
    expect(await classify(json({ code: "rate_limited" }, 429))).toEqual({ kind: "rate_limited", retryAfter: undefined });
  });

  it("tells expired flows, CSRF failures, redirects, sessions and flows with errors apart", async () => {
    expect(await classify(json({ error: { id: "self_service_flow_expired", code: 410 }, use_flow_id: "n" }, 410))).toEqual({ kind: "expired" });
    expect(await classify(json({ error: { id: "security_csrf_violation", code: 403 } }, 403))).toEqual({ kind: "csrf" });
    expect(await classify(json({ error: { id: "session_already_available", code: 400 } }, 400))).toEqual({ kind: "signed_in" });
    expect(await classify(json({ error: { id: "session_aal2_required", code: 403 }, redirect_browser_to: "/login?aal=aal2" }, 403))).toEqual({
      kind: "aal2_required",
      to: "/login?aal=aal2",
    });
    const redirect = await classify(
      json(
        {
          error: { id: "browser_location_change_required", code: 422 },
          redirect_browser_to: "http://127.0.0.1:8080/dashboard/security?flow=s1",
          continue_with: [{ action: "show_settings_ui", flow: { id: "s1" } }],
        },
        422,
      ),
    );
    expect(redirect).toMatchObject({ kind: "redirect", to: "http://127.0.0.1:8080/dashboard/security?flow=s1", continueWith: [{ action: "show_settings_ui" }] });
    const f = flow("f1", loginNodes(), { messages: [{ id: 4000006, text: "The provided credentials are invalid", type: "error" }] });
    expect(await classify(json(f, 400))).toEqual({ kind: "flow", flow: f });
    expect(await classify(json({ error: { id: "x", code: 500, reason: "boom" } }, 500))).toEqual({ kind: "error", status: 500, id: "x", message: "boom" });
  });
});

describe("flows", () => {
  it("creates a browser flow same-origin with cookies and submits JSON with the remember header only when asked", async () => {
    const k = fakeKratos({
      "GET /self-service/login/browser": () => json(flow("L1", loginNodes())),
      "POST /self-service/login": () => json({ session: { id: "s" } }),
    });
    let credentials: RequestCredentials | undefined;
    setKratosFetch((i, init) => {
      credentials = init?.credentials;
      return k.fetch(i, init);
    });
    const r = await createFlow("login");
    expect(r.kind).toBe("flow");
    expect(credentials).toBe("include");
    expect(k.calls[0]!.headers.get("Accept")).toBe("application/json");

    const ok = await submitFlow("login", "L1", { method: "password", identifier: "a@b.co", password: "Pw1!xx", csrf_token: "c" }, { remember: true });
    expect(ok.kind).toBe("success");
    const post = k.calls[1]!;
    expect(post.query.get("flow")).toBe("L1");
    expect(post.headers.get(REMEMBER_HEADER)).toBe("1");
    expect(post.headers.get("Content-Type")).toBe("application/json");
    expect(post.body).toEqual({ method: "password", identifier: "a@b.co", password: "Pw1!xx", csrf_token: "c" });

    await submitFlow("login", "L1", { method: "password", identifier: "a@b.co", password: "x", csrf_token: "c" });
    expect(k.calls[2]!.headers.get(REMEMBER_HEADER)).toBeNull();
  });

  it("returns registration's continue_with and settings' success state", async () => {
    const k = fakeKratos({
      "POST /self-service/registration": () =>
        json({ identity: { id: "i" }, continue_with: [{ action: "show_verification_ui", flow: { id: "V1", verifiable_address: "a@b.co" } }] }),
      "POST /self-service/settings": () => json(flow("S1", [], { state: "success", messages: [{ id: 1050001, text: "saved", type: "success" }] })),
    });
    setKratosFetch(k.fetch);
    const reg = await submitFlow("registration", "R1", { method: "password", password: "p", traits: { email: "a@b.co", terms: true }, csrf_token: "c" });
    expect(reg).toMatchObject({ kind: "success", continueWith: [{ action: "show_verification_ui", flow: { id: "V1" } }] });
    expect((k.calls[0]!.body as { traits: unknown }).traits).toEqual({ email: "a@b.co", terms: true });
    const set = await submitFlow("settings", "S1", { method: "password", password: "p", csrf_token: "c" });
    expect(set.kind).toBe("success");
  });
});
