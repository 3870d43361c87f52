import { renderHook, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setApiFetch } from "~/api/client";
import {
  apiFetch,
  clearSession,
  CSRF_HEADER,
  loadMe,
  logout,
  meState,
  resetSession,
  SESSION_TOKEN_KEY,
  USER_INFO_KEY,
  useSession,
  withCsrf,
} from "~/lib/session";
import { clientLoader as protectedLoader } from "~/routes/protected";
import { setKratosFetch } from "./kratos";
import { fakeKratos, json } from "./testing/kratos-fake";

const member = { id: "m1", email: "a@b.co", email_verified: true, phone_verified: false, aal: "aal2", locale: "ja-JP", two_factor: { totp: true, lookup_secret: true } };

// A browser that held a session has the CSRF cookie the BFF set; the tests start there unless they say otherwise.
beforeEach(() => {
  resetSession();
  document.cookie = "exhub_csrf=hint; path=/";
});
afterEach(() => {
  setKratosFetch(undefined);
  resetSession();
  document.cookie = "exhub_csrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/";
});

function countingMe(res: () => Response) {
  let n = 0;
  setApiFetch(async (req) => {
    if (new URL(req.url).pathname !== "/api/v1/me") return json({}, 404);
    n++;
    return res();
  });
  return () => n;
}

describe("session from GET /api/v1/me", () => {
  it("maps 200, 401 and 403 aal2_required, and asks once for concurrent readers", async () => {
    const calls = countingMe(() => json(member));
    const [a, b] = await Promise.all([loadMe(), loadMe()]);
    expect(a).toEqual(b);
    expect(calls()).toBe(1);
    expect(meState()).toMatchObject({ status: "member", member: { id: "m1", two_factor: { totp: true } } });
    // Known: no second request until forced.
    await loadMe();
    expect(calls()).toBe(1);

    countingMe(() => json({ status: 401, title: "Unauthorized" }, 401));
    expect((await loadMe({ force: true })).status).toBe("anonymous");
    countingMe(() => json({ status: 403, code: "aal2_required" }, 403));
    expect((await loadMe({ force: true })).status).toBe("aal2_required");
    countingMe(() => json({ status: 500 }, 500));
    expect((await loadMe({ force: true })).status).toBe("error");
  });

  it("asks nothing on a page load without the session's cookie, and a 401 drops a stale one", async () => {
    document.cookie = "exhub_csrf=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/";
    const calls = countingMe(() => json(member));
    expect((await loadMe()).status).toBe("anonymous");
    expect(calls()).toBe(0);
    // After a sign-in the load is forced: it asks whatever the cookies say.
    expect((await loadMe({ force: true })).status).toBe("member");
    expect(calls()).toBe(1);

    document.cookie = "exhub_csrf=stale; path=/";
    resetSession();
    const gone = countingMe(() => json({ status: 401, title: "Unauthorized" }, 401));
    expect((await loadMe()).status).toBe("anonymous");
    expect(gone()).toBe(1);
    expect(document.cookie).not.toContain("exhub_csrf=");
    resetSession();
    expect((await loadMe()).status).toBe("anonymous");
    expect(gone()).toBe(1);
  });

  it("gives the navigation the member id and the Japan flag, and removes the old token keys", async () => {
    localStorage.setItem(SESSION_TOKEN_KEY, "old-token");
    localStorage.setItem(USER_INFO_KEY, '{"tid":"1"}');
    countingMe(() => json(member));
    const { result } = renderHook(() => useSession());
    await waitFor(() => expect(result.current?.user).toEqual({ tid: "m1", tisjp: true }));
    expect(localStorage.getItem(SESSION_TOKEN_KEY)).toBeNull();
    expect(localStorage.getItem(USER_INFO_KEY)).toBeNull();
    // Nothing of the session is written to storage.
    expect(Object.keys(localStorage)).toEqual([]);
  });
});

describe("CSRF header", () => {
  it("adds the cookie's token to state-changing requests only", async () => {
    document.cookie = "exhub_csrf=tok%3D1; path=/";
    expect(withCsrf(new Request("http://x/api/v1/me/favorites", { method: "POST" })).headers.get(CSRF_HEADER)).toBe("tok=1");
    expect(withCsrf(new Request("http://x/api/v1/me/favorites", { method: "DELETE" })).headers.get(CSRF_HEADER)).toBe("tok=1");
    expect(withCsrf(new Request("http://x/api/v1/me")).headers.get(CSRF_HEADER)).toBeNull();
    let seen: Request | undefined;
    const orig = globalThis.fetch;
    globalThis.fetch = (async (r: Request) => {
      seen = r;
      return json({});
    }) as typeof fetch;
    try {
      await apiFetch("/api/v1/me/preferences", { method: "PUT", body: "{}" });
    } finally {
      globalThis.fetch = orig;
    }
    expect(seen!.headers.get(CSRF_HEADER)).toBe("tok=1");
    expect(new URL(seen!.url).pathname).toBe("/api/v1/me/preferences");
  });
});

describe("logout", () => {
  it("ends the Kratos session through the browser logout flow and forgets the member only then", async () => {
    countingMe(() => json(member));
    await loadMe();
    const failing = fakeKratos({ "GET /self-service/logout/browser": () => json({ error: { code: 500 } }, 500) });
    setKratosFetch(failing.fetch);
    expect(await logout()).toBe(false);
    expect(meState().status).toBe("member");

    const k = fakeKratos({
      "GET /self-service/logout/browser": () => json({ logout_token: "LT", logout_url: "http://127.0.0.1:8080/.ory/self-service/logout?token=LT" }),
      "GET /self-service/logout": () => new Response(null, { status: 204 }),
    });
    setKratosFetch(k.fetch);
    expect(await logout()).toBe(true);
    expect(k.calls.map((c) => `${c.path}?${c.query}`)).toEqual(["/self-service/logout/browser?", "/self-service/logout?token=LT"]);
    expect(meState().status).toBe("anonymous");
  });
});

describe("protected routes", () => {
  const load = (url: string) => protectedLoader({ request: new Request(url) });

  it("send a visitor to /login with the page to come back to", async () => {
    countingMe(() => json({ status: 401 }, 401));
    const r = (await load("http://127.0.0.1:8080/wallet?page=deposit").catch((e: unknown) => e)) as Response;
    expect(r.status).toBe(302);
    expect(r.headers.get("Location")).toBe("/login?return_to=%2Fwallet%3Fpage%3Ddeposit");
  });

  it("send a member whose second factor is due to /otpauth", async () => {
    countingMe(() => json({ status: 403, code: "aal2_required" }, 403));
    const r = (await load("http://127.0.0.1:8080/history").catch((e: unknown) => e)) as Response;
    expect(r.headers.get("Location")).toBe("/otpauth?return_to=%2Fhistory");
  });

  it("let a member in, and fail (not redirect) when the BFF cannot answer", async () => {
    countingMe(() => json(member));
    expect(await load("http://127.0.0.1:8080/dashboard")).toBeNull();
    clearSession();
    resetSession();
    countingMe(() => json({ status: 502 }, 502));
    await expect(load("http://127.0.0.1:8080/dashboard")).rejects.toThrow("/api/v1/me answered 502");
  });
});
