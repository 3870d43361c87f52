import type { UiNode } from "@ory/client-fetch";
import type { Flow } from "../kratos";

// A scripted Kratos for tests: answers by method and path, records requests.
export type Call = { method: string; path: string; query: URLSearchParams; headers: Headers; body: unknown };
export type Handler = (c: Call) => Response | Promise<Response>;

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}

export function fakeKratos(routes: Record<string, Handler | Handler[]>) {
  const calls: Call[] = [];
  const counters: Record<string, number> = {};
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? "GET").toUpperCase();
    const path = url.pathname.replace(/^\/\.ory/, "");
    const raw = typeof init?.body === "string" ? init.body : undefined;
    const call: Call = { method, path, query: url.searchParams, headers: new Headers(init?.headers), body: raw ? JSON.parse(raw) : undefined };
    calls.push(call);
    const key = `${method} ${path}`;
    const h = routes[key];
    if (!h) return json({ error: { id: "not_found", code: 404 } }, 404);
    if (Array.isArray(h)) {
      const i = counters[key] ?? 0;
      counters[key] = i + 1;
      return h[Math.min(i, h.length - 1)]!(call);
    }
    return h(call);
  };
  return { fetch, calls };
}

export function input(name: string, opts: Partial<{ type: string; value: unknown; group: string; label: { id: number; text: string; type: "info" }; messages: UiNode["messages"] }> = {}): UiNode {
  return {
    type: "input",
    group: (opts.group ?? "default") as UiNode["group"],
    attributes: { node_type: "input", name, type: opts.type ?? "text", value: opts.value, disabled: false } as never,
    messages: opts.messages ?? [],
    meta: opts.label ? { label: opts.label } : {},
  };
}

export function submit(name: string, value: string, group: string, label?: { id: number; text: string }): UiNode {
  return input(name, { type: "submit", value, group, label: label ? { ...label, type: "info" } : undefined });
}

export function flow(id: string, nodes: UiNode[], extra: Partial<Flow> & { messages?: Flow["ui"]["messages"] } = {}): Flow {
  const { messages, ...rest } = extra;
  return {
    id,
    type: "browser",
    state: rest.state ?? "choose_method",
    ui: { action: `http://127.0.0.1:8080/.ory/self-service/x?flow=${id}`, method: "POST", nodes: [input("csrf_token", { type: "hidden", value: "csrf-" + id }), ...nodes], messages },
    ...rest,
  };
}

export const loginNodes = (): UiNode[] => [
  input("identifier", { group: "default", label: { id: 1070004, text: "ID", type: "info" } }),
  input("password", { type: "password", group: "password", label: { id: 1070001, text: "Password", type: "info" } }),
  submit("method", "password", "password", { id: 1010001, text: "Sign in" }),
];
