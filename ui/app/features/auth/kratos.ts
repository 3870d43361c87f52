import { Configuration, FrontendApi, ResponseError, type UiContainer, type UiText } from "@ory/client-fetch";

// Kratos' browser flows, same-origin through the edge at /.ory, with JSON
// bodies and cookies. Every answer is folded into one FlowResult so the
// screens handle success, a flow to show again, an expired flow, a CSRF
// failure, a redirect, the BFF gate's password rules and its rate limit
// the same way.

export type FlowKind = "login" | "registration" | "recovery" | "verification" | "settings";

// What the screens need of any flow.
export type Flow = {
  id: string;
  type?: string;
  state?: unknown;
  return_to?: string;
  requested_aal?: string;
  ui: UiContainer;
};

export type ContinueWith = {
  action: string;
  flow?: { id: string; url?: string; verifiable_address?: string };
  redirect_browser_to?: string;
};

// Password rules the gate names in `errors[].value`.
export type PasswordRule = "length" | "number" | "lowercase" | "uppercase" | "special";
export const PASSWORD_RULES: readonly PasswordRule[] = ["length", "number", "lowercase", "uppercase", "special"];

export type FlowResult =
  // Done: the body Kratos answered (session, identity, continue_with...).
  | { kind: "success"; body: Record<string, unknown>; continueWith: ContinueWith[]; flow?: Flow }
  // Shown again, with messages (validation errors, "code sent", a settings step done).
  | { kind: "flow"; flow: Flow }
  // The flow expired or is gone: start a new one.
  | { kind: "expired" }
  // The CSRF cookie did not match: start a new one.
  | { kind: "csrf" }
  // Kratos wants the browser elsewhere (another flow, a finished recovery).
  | { kind: "redirect"; to: string; errorId?: string; continueWith: ContinueWith[] }
  // The BFF gate refused the password.
  | { kind: "policy"; rules: PasswordRule[]; messages: string[] }
  // Too many attempts; seconds until the next is allowed, when said.
  | { kind: "rate_limited"; retryAfter?: number }
  // Already signed in (a login or registration flow cannot start).
  | { kind: "signed_in" }
  // Second factor due first (settings of a member with 2FA).
  | { kind: "aal2_required"; to?: string }
  | { kind: "error"; status: number; id?: string; message?: string };

type FetchFn = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
let fetchOverride: FetchFn | undefined;
let client: FrontendApi | undefined;

export const KRATOS_BASE = "/.ory";
export const REMEMBER_HEADER = "X-Exhub-Remember";

// Replaces the transport (tests pass a fake); undefined restores fetch.
export function setKratosFetch(f: FetchFn | undefined): void {
  fetchOverride = f;
  client = undefined;
}

export function kratos(): FrontendApi {
  client ??= new FrontendApi(
    new Configuration({
      basePath: `${typeof window === "undefined" ? "" : window.location.origin}${KRATOS_BASE}`,
      credentials: "include",
      headers: { Accept: "application/json" },
      fetchApi: (input, init) => (fetchOverride ?? globalThis.fetch)(input, init),
    }),
  );
  return client;
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function isFlow(v: unknown): v is Flow {
  const o = asRecord(v);
  return !!o && typeof o.id === "string" && !!asRecord(o.ui) && Array.isArray(asRecord(o.ui)!.nodes);
}

function continueWithOf(body: Record<string, unknown> | undefined): ContinueWith[] {
  const list = body?.continue_with;
  return Array.isArray(list) ? (list.filter((x) => asRecord(x) && typeof asRecord(x)!.action === "string") as ContinueWith[]) : [];
}

function retryAfterSeconds(h: string | null): number | undefined {
  if (!h) return undefined;
  const n = Number(h);
  if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  const when = Date.parse(h);
  return Number.isFinite(when) ? Math.max(0, Math.ceil((when - Date.now()) / 1000)) : undefined;
}

async function readJSON(res: Response): Promise<unknown> {
  try {
    const text = await res.text();
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

// Maps a non-2xx answer of Kratos (or of the BFF gate in front of it).
export async function classify(res: Response): Promise<FlowResult> {
  const body = await readJSON(res);
  const o = asRecord(body);
  const err = asRecord(o?.error);
  const errorId = typeof err?.id === "string" ? err.id : undefined;
  const redirect = typeof o?.redirect_browser_to === "string" ? o.redirect_browser_to : undefined;
  if (res.status === 429) return { kind: "rate_limited", retryAfter: retryAfterSeconds(res.headers.get("Retry-After")) };
  // The gate: problem+json with the broken rules.
  if (res.status === 422 && Array.isArray(o?.errors) && !redirect) {
    const rules: PasswordRule[] = [];
    const messages: string[] = [];
    for (const e of o.errors as unknown[]) {
      const r = asRecord(e);
      if (!r) continue;
      if (typeof r.message === "string") messages.push(r.message);
      for (const v of String(r.value ?? "").split(/[|,\s]+/)) {
        if ((PASSWORD_RULES as readonly string[]).includes(v) && !rules.includes(v as PasswordRule)) rules.push(v as PasswordRule);
      }
    }
    return { kind: "policy", rules, messages };
  }
  if (errorId === "session_aal2_required") return { kind: "aal2_required", to: redirect };
  if (errorId === "session_already_available") return { kind: "signed_in" };
  if (errorId === "security_csrf_violation" || errorId === "security_identity_mismatch") return { kind: "csrf" };
  if (errorId === "self_service_flow_expired" || res.status === 410) return { kind: "expired" };
  if (redirect) return { kind: "redirect", to: redirect, errorId, continueWith: continueWithOf(o) };
  if (res.status === 404 && (errorId === undefined || errorId === "not_found")) return { kind: "expired" };
  if (isFlow(body)) return { kind: "flow", flow: body };
  if (isFlow(o?.flow)) return { kind: "flow", flow: o.flow };
  return {
    kind: "error",
    status: res.status,
    id: errorId,
    message: typeof err?.reason === "string" ? err.reason : typeof err?.message === "string" ? err.message : undefined,
  };
}

async function run(call: () => Promise<unknown>): Promise<FlowResult> {
  try {
    const body = await call();
    if (isFlow(body)) return { kind: "flow", flow: body };
    return { kind: "error", status: 200 };
  } catch (e) {
    if (e instanceof ResponseError) return classify(e.response);
    return { kind: "error", status: 0, message: e instanceof Error ? e.message : String(e) };
  }
}

function json(x: unknown): Record<string, unknown> {
  // The client parses dates into Date objects; the screens want plain JSON.
  return JSON.parse(JSON.stringify(x)) as Record<string, unknown>;
}

export type CreateOptions = { returnTo?: string; aal?: string; refresh?: boolean };

// Starts a browser flow.
export function createFlow(kind: FlowKind, opts: CreateOptions = {}): Promise<FlowResult> {
  const k = kratos();
  const returnTo = opts.returnTo;
  return run(async () => {
    switch (kind) {
      case "login":
        return json(await k.createBrowserLoginFlow({ returnTo, aal: opts.aal, refresh: opts.refresh }));
      case "registration":
        return json(await k.createBrowserRegistrationFlow({ returnTo }));
      case "recovery":
        return json(await k.createBrowserRecoveryFlow({ returnTo }));
      case "verification":
        return json(await k.createBrowserVerificationFlow({ returnTo }));
      case "settings":
        return json(await k.createBrowserSettingsFlow({ returnTo }));
    }
  });
}

// Reads a flow by id (after a reload or a redirect with ?flow=).
export function getFlow(kind: FlowKind, id: string): Promise<FlowResult> {
  const k = kratos();
  return run(async () => {
    switch (kind) {
      case "login":
        return json(await k.getLoginFlow({ id }));
      case "registration":
        return json(await k.getRegistrationFlow({ id }));
      case "recovery":
        return json(await k.getRecoveryFlow({ id }));
      case "verification":
        return json(await k.getVerificationFlow({ id }));
      case "settings":
        return json(await k.getSettingsFlow({ id }));
    }
  });
}

export type SubmitOptions = { remember?: boolean };

// Submits a flow's form. `body` holds the method and its fields (nested: traits.email -> {traits:{email}}).
export async function submitFlow(
  kind: FlowKind,
  flowId: string,
  body: Record<string, unknown>,
  opts: SubmitOptions = {},
): Promise<FlowResult> {
  const k = kratos();
  const init = async ({ init }: { init: RequestInit }) => {
    const headers = new Headers(init.headers);
    if (opts.remember) headers.set(REMEMBER_HEADER, "1");
    return { headers };
  };
  try {
    let out: unknown;
    switch (kind) {
      case "login":
        out = await k.updateLoginFlow({ flow: flowId, updateLoginFlowBody: body as never }, init);
        break;
      case "registration":
        out = await k.updateRegistrationFlow({ flow: flowId, updateRegistrationFlowBody: body as never }, init);
        break;
      case "recovery":
        out = await k.updateRecoveryFlow({ flow: flowId, updateRecoveryFlowBody: body as never }, init);
        break;
      case "verification":
        out = await k.updateVerificationFlow({ flow: flowId, updateVerificationFlowBody: body as never }, init);
        break;
      case "settings":
        out = await k.updateSettingsFlow({ flow: flowId, updateSettingsFlowBody: body as never }, init);
        break;
    }
    const o = json(out ?? {});
    // Recovery, verification and settings answer with the flow itself: a step done.
    if (isFlow(o) && (kind === "recovery" || kind === "verification" || kind === "settings")) {
      const cw = continueWithOf(o);
      if (kind === "settings" && o.state === "success") return { kind: "success", body: o, continueWith: cw, flow: o };
      if ((kind === "verification" || kind === "recovery") && o.state === "passed_challenge") return { kind: "success", body: o, continueWith: cw, flow: o };
      return { kind: "flow", flow: o };
    }
    return { kind: "success", body: o, continueWith: continueWithOf(o) };
  } catch (e) {
    if (e instanceof ResponseError) return classify(e.response);
    return { kind: "error", status: 0, message: e instanceof Error ? e.message : String(e) };
  }
}

// The flow id carried by a URL of one of the UI pages (`/forgotPassword_B?flow=...`).
export function flowIdFrom(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url, "http://x").searchParams.get("flow") ?? undefined;
  } catch {
    return undefined;
  }
}

// Kratos' error of a failed browser request (the /error page).
export async function getFlowError(id: string): Promise<{ id?: string; message?: string; status?: number } | null> {
  try {
    const e = json(await kratos().getFlowError({ id }));
    const err = asRecord(e.error);
    return {
      id: typeof err?.id === "string" ? err.id : undefined,
      message: typeof err?.message === "string" ? err.message : typeof err?.reason === "string" ? err.reason : undefined,
      status: typeof err?.code === "number" ? err.code : undefined,
    };
  } catch {
    return null;
  }
}

// Browser logout: create the flow, then call it. True only when Kratos confirmed.
export async function kratosLogout(): Promise<boolean> {
  const k = kratos();
  try {
    const flow = await k.createBrowserLogoutFlow({});
    await k.updateLogoutFlow({ token: flow.logout_token });
    return true;
  } catch (e) {
    // No session to end: nothing to log out of.
    if (e instanceof ResponseError && e.response.status === 401) return true;
    return false;
  }
}

// The messages of a flow and of its nodes, for tests and screens.
export function flowMessages(flow: Flow): UiText[] {
  return [...(flow.ui.messages ?? []), ...flow.ui.nodes.flatMap((n) => n.messages ?? [])];
}
