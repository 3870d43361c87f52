import { vi } from "vitest";
import { setApiFetch } from "~/api/client";

// A scripted BFF for the dashboard's tests: answers /api/v1/* by
// "METHOD /path" (the query string is kept in the call), records calls.
export type ApiCall = {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: unknown;
};
export type ApiHandler = (c: ApiCall) => Response | Promise<Response>;

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: {
      "Content-Type":
        status >= 400 ? "application/problem+json" : "application/json",
    },
  });
}

export function fakeApi(routes: Record<string, ApiHandler>) {
  const calls: ApiCall[] = [];
  const handle = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const ct = req.headers.get("Content-Type") ?? "";
    let body: unknown;
    if (ct.includes("application/json")) body = JSON.parse(await req.text());
    else if (ct.includes("multipart/form-data")) body = await req.formData();
    const c: ApiCall = {
      method: req.method,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
    };
    calls.push(c);
    const h = routes[`${req.method} ${url.pathname}`];
    return h ? h(c) : jsonResponse({ title: "Not Found", status: 404 }, 404);
  };
  // The typed client (GET /api/v1/me) and plain fetch (the member API) both land here.
  setApiFetch(handle);
  // A browser with a session holds the CSRF cookie the BFF set; without it a page load does not ask for /me.
  if (routes["GET /api/v1/me"] && !document.cookie.includes("exhub_csrf=")) document.cookie = "exhub_csrf=test-csrf; path=/";
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) =>
    handle(input instanceof Request ? input : new Request(input, init)),
  );
  return { calls };
}

export const member = {
  id: "0b6c2b4e-1111-4a5e-9c1e-000000000001",
  email: "ann@example.com",
  email_verified: true,
  phone_verified: false,
  nickname: "Ann",
  aal: "aal1",
  two_factor: { totp: false, lookup_secret: false },
};
