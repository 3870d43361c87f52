// Errors of the API, read the one way for every caller. The BFF answers bad
// requests with RFC 9457 problem+json: title, status, detail, an errors[]
// list (location such as "body.email" or "query.symbol", the value sent and
// a message) and a machine-readable `code` extension.

export type ProblemError = { location?: string; value?: unknown; message: string };

export type Problem = {
  type?: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  code?: string;
  errors: ProblemError[];
};

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;

  constructor(status: number, message: string, problem?: Problem) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.problem = problem ?? { title: message, status, errors: [] };
  }

  get code(): string | undefined {
    return this.problem.code;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

// Reads a problem document from whatever a response carried: the parsed
// JSON body, a text body, or nothing. Fields of the wrong type are dropped.
export function readProblem(status: number, statusText: string, body: unknown): Problem {
  const o = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const errors: ProblemError[] = [];
  if (Array.isArray(o.errors)) {
    for (const e of o.errors) {
      if (e === null || typeof e !== "object") continue;
      const r = e as Record<string, unknown>;
      const message = str(r.message);
      if (!message) continue;
      errors.push({ location: str(r.location), value: r.value, message });
    }
  }
  const text = typeof body === "string" ? body.trim().slice(0, 200) : undefined;
  return {
    type: str(o.type),
    title: str(o.title) ?? (statusText || (status === 0 ? "Network error" : `HTTP ${status}`)),
    status: typeof o.status === "number" ? o.status : status,
    detail: str(o.detail) ?? (text || undefined),
    instance: str(o.instance),
    code: str(o.code),
    errors,
  };
}

// The ApiError of a failed openapi-fetch call: `what` names the request
// ("GET /api/v1/tickers") in the message, which is for logs, not users.
export function apiError(what: string, response: Pick<Response, "status" | "statusText">, body: unknown): ApiError {
  const p = readProblem(response.status, response.statusText, body);
  return new ApiError(response.status, `${what}: ${response.status} ${p.detail ?? p.title}`, p);
}

// Unwraps an openapi-fetch result: the data, or an ApiError.
export function unwrap<T>(
  what: string,
  r: { data?: T; error?: unknown; response: Pick<Response, "status" | "statusText"> },
): T {
  if (r.error !== undefined || r.data === undefined) throw apiError(what, r.response, r.error);
  return r.data;
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

// A 4xx answer: the request itself is wrong, so repeating it cannot help.
export function isClientError(e: unknown): boolean {
  return e instanceof ApiError && e.status >= 400 && e.status < 500;
}

// The messages of a problem's errors[] by field name: "body.email" and
// "body.profile.email" both give "email" (the last part of the location).
export function fieldErrors(p: Problem): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of p.errors) {
    if (!e.location) continue;
    const parts = e.location.split(/[.[\]]+/).filter((s) => s !== "");
    const name = parts[parts.length - 1];
    if (name && !out.has(name)) out.set(name, e.message);
  }
  return out;
}

// One line for a person: the detail when the server gave one, else the
// title. Errors that are not from the API fall back to `fallback`.
export function errorText(e: unknown, fallback: string): string {
  if (e instanceof ApiError) return e.problem.detail ?? e.problem.title;
  return fallback;
}
