import { describe, expect, it } from "vitest";
import { api, setApiFetch } from "~/api/client";
import { jsonResponse } from "~/test/fixtures";
import { ApiError, apiError, errorText, fieldErrors, isClientError, readProblem, unwrap } from "./errors";

describe("readProblem", () => {
  it("reads every RFC 9457 member and the code extension", () => {
    const p = readProblem(422, "Unprocessable Entity", {
      type: "about:blank",
      title: "Unprocessable Entity",
      status: 422,
      detail: "validation failed",
      instance: "/api/v1/account",
      code: "email_taken",
      errors: [
        { location: "body.email", value: "a@b", message: "expected a valid email" },
        { message: "no location" },
        { location: "body.x" }, // no message: dropped
        "junk",
      ],
    });
    expect(p).toEqual({
      type: "about:blank",
      title: "Unprocessable Entity",
      status: 422,
      detail: "validation failed",
      instance: "/api/v1/account",
      code: "email_taken",
      errors: [
        { location: "body.email", value: "a@b", message: "expected a valid email" },
        { location: undefined, value: undefined, message: "no location" },
      ],
    });
  });

  it("falls back to the status line for bodies that are not problems", () => {
    expect(readProblem(502, "Bad Gateway", "<html>upstream down</html>")).toMatchObject({
      title: "Bad Gateway",
      status: 502,
      detail: "<html>upstream down</html>",
      errors: [],
    });
    expect(readProblem(503, "", undefined)).toMatchObject({ title: "HTTP 503", status: 503, detail: undefined });
    expect(readProblem(404, "Not Found", { title: 7, code: 3 })).toMatchObject({ title: "Not Found", code: undefined });
  });
});

describe("ApiError helpers", () => {
  it("maps field errors by the last part of the location", () => {
    const p = readProblem(400, "Bad Request", {
      errors: [
        { location: "body.profile.email", message: "taken" },
        { location: "query.symbol", message: "unknown" },
        { location: "body.items[2]", message: "bad item" },
        { location: "body.email", message: "second one is ignored" },
      ],
    });
    expect(Object.fromEntries(fieldErrors(p))).toEqual({ email: "taken", symbol: "unknown", 2: "bad item" });
  });

  it("tells client errors from the rest", () => {
    expect(isClientError(apiError("GET /x", { status: 404, statusText: "Not Found" }, undefined))).toBe(true);
    expect(isClientError(apiError("GET /x", { status: 429, statusText: "" }, undefined))).toBe(true);
    expect(isClientError(apiError("GET /x", { status: 500, statusText: "" }, undefined))).toBe(false);
    expect(isClientError(new ApiError(0, "timed out"))).toBe(false);
    expect(isClientError(new TypeError("Failed to fetch"))).toBe(false);
  });

  it("gives a person the detail, else the title, else the fallback", () => {
    const withDetail = apiError("GET /x", { status: 400, statusText: "Bad Request" }, { title: "Bad", detail: "symbol unknown" });
    expect(withDetail.message).toBe("GET /x: 400 symbol unknown");
    expect(errorText(withDetail, "fallback")).toBe("symbol unknown");
    expect(errorText(apiError("GET /x", { status: 500, statusText: "Internal Server Error" }, undefined), "f")).toBe(
      "Internal Server Error",
    );
    expect(errorText(new Error("boom"), "Network anomaly")).toBe("Network anomaly");
  });

  it("unwraps openapi-fetch results from a real client", async () => {
    setApiFetch(async (req) =>
      new URL(req.url).pathname === "/api/v1/exchanges"
        ? jsonResponse({ exchanges: [] })
        : jsonResponse({ title: "Bad Request", status: 400, detail: "limit too big", code: "limit", errors: [] }, 400),
    );
    expect(unwrap("GET /api/v1/exchanges", await api().GET("/api/v1/exchanges"))).toEqual({ exchanges: [] });
    const r = await api().GET("/api/v1/movers", { params: { query: { limit: 1000 } } });
    let caught: unknown;
    try {
      unwrap("GET /api/v1/movers", r);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).status).toBe(400);
    expect((caught as ApiError).code).toBe("limit");
    expect((caught as ApiError).problem.detail).toBe("limit too big");
  });
});
