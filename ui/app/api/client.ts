import createClient, { type Client, type Middleware } from "openapi-fetch";
import { ApiError, apiError } from "~/lib/errors";
import type { components, paths } from "./schema";

export { ApiError };

export type Exchange = components["schemas"]["Exchange"];

// Requests give up after this long (the product's HTTP timeout).
export const REQUEST_TIMEOUT_MS = 30_000;

type FetchFn = (input: Request) => Promise<Response>;

let fetchOverride: FetchFn | undefined;
let client: Client<paths> | undefined;
let throwing: Client<paths> | undefined;

// Replaces the transport (tests pass a fake); undefined restores the browser's fetch.
export function setApiFetch(f: FetchFn | undefined): void {
  fetchOverride = f;
  client = undefined;
  throwing = undefined;
}

function withTimeout(f: FetchFn): FetchFn {
  return (req) =>
    new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new ApiError(0, `request timed out after ${REQUEST_TIMEOUT_MS} ms`)),
        REQUEST_TIMEOUT_MS,
      );
      f(req).then(
        (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
}

function newClient(): Client<paths> {
  return createClient<paths>({
    // The API is same-origin: the edge forwards /api to the BFF.
    baseUrl: window.location.origin,
    fetch: withTimeout(fetchOverride ?? ((req) => globalThis.fetch(req))),
  });
}

// The plain client: every call resolves to { data, error, response }; read
// a failure with unwrap() or apiError() from ~/lib/errors.
export function api(): Client<paths> {
  client ??= newClient();
  return client;
}

// Turns every answer that is not 2xx into an ApiError carrying the problem
// document, so queries and mutations always fail with the same error type
// (and the retry rule can see the status).
const throwOnError: Middleware = {
  async onResponse({ request, response }) {
    if (response.ok) return undefined;
    let body: unknown;
    const text = await response.clone().text();
    try {
      body = text === "" ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    throw apiError(`${request.method} ${new URL(request.url).pathname}`, response, body);
  },
};

// The client behind the query layer (~/api/queries, ~/api/hooks): every
// failure is an ApiError.
export function strictApi(): Client<paths> {
  if (!throwing) {
    throwing = newClient();
    throwing.use(throwOnError);
  }
  return throwing;
}

export type Mover = components["schemas"]["Mover"];
export type Instrument = components["schemas"]["Instrument"];
export type Ticker = components["schemas"]["Ticker"];
export type MarketType = "SPOT" | "SWAP";
