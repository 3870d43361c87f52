import { QueryClientProvider, useQuery } from "@tanstack/react-query";
import { act, render, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "~/lib/errors";
import { demoExchanges, fakeApi, jsonResponse } from "~/test/fixtures";
import { setApiFetch } from "./client";
import { $api } from "./hooks";
import { createAppQueryClient, fetchExchanges, invalidatePath, marketQueries, queryClient, queryOptionsFor, retryRule } from "./queries";

function setVisibility(state: "visible" | "hidden") {
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => state });
  document.dispatchEvent(new Event("visibilitychange"));
}

afterEach(() => {
  // Back to jsdom's own property.
  delete (document as unknown as Record<string, unknown>).visibilityState;
});

describe("query layer", () => {
  it("fails with an ApiError carrying the problem, and never retries a 4xx", async () => {
    let calls = 0;
    setApiFetch(async () => {
      calls++;
      return jsonResponse({ title: "Bad Request", status: 400, detail: "unknown exchange", code: "exchange", errors: [] }, 400);
    });
    const client = createAppQueryClient();
    client.setDefaultOptions({ queries: { ...client.getDefaultOptions().queries, retryDelay: 0 } });
    const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={client}>{children}</QueryClientProvider>;
    const { result } = renderHook(() => $api.useQuery("get", "/api/v1/tickers", { params: { query: { exchange: "x", type: "SPOT" } } }), {
      wrapper,
    });
    await waitFor(() => expect(result.current.isError).toBe(true));
    expect(calls).toBe(1);
    const err = result.current.error as unknown as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(400);
    expect(err.code).toBe("exchange");
    expect(err.message).toBe("GET /api/v1/tickers: 400 unknown exchange");
  });

  it("retries server and network failures twice", async () => {
    let calls = 0;
    setApiFetch(async () => {
      calls++;
      if (calls === 1) throw new TypeError("Failed to fetch");
      if (calls === 2) return new Response("bad gateway", { status: 502, statusText: "Bad Gateway" });
      return jsonResponse({ exchanges: demoExchanges });
    });
    const client = createAppQueryClient();
    client.setDefaultOptions({ queries: { ...client.getDefaultOptions().queries, retryDelay: 0 } });
    const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={client}>{children}</QueryClientProvider>;
    const { result } = renderHook(() => useQuery(marketQueries.exchanges()), { wrapper });
    await waitFor(() => expect(result.current.isSuccess).toBe(true));
    expect(calls).toBe(3);
    expect(result.current.data?.exchanges).toHaveLength(demoExchanges.length);
    expect(retryRule(0, new ApiError(503, "x"))).toBe(true);
    expect(retryRule(2, new ApiError(503, "x"))).toBe(false);
    expect(retryRule(0, new ApiError(404, "x"))).toBe(false);
    expect(retryRule(0, new ApiError(429, "x"))).toBe(false);
  });

  it("shares one request between a loader and the components, and invalidation fetches again", async () => {
    const api = fakeApi({ "/api/v1/exchanges": () => jsonResponse({ exchanges: demoExchanges }) });
    setApiFetch(api.fetch);
    const [a, b] = await Promise.all([fetchExchanges(), fetchExchanges()]);
    expect(a).toEqual(b);
    function Menu() {
      const { data } = useQuery(marketQueries.exchanges());
      return <output>{data?.exchanges?.length ?? "none"}</output>;
    }
    const view = render(
      <QueryClientProvider client={queryClient}>
        <Menu />
      </QueryClientProvider>,
    );
    expect(view.container.textContent).toBe(String(demoExchanges.length));
    expect(api.calls).toEqual(["GET /api/v1/exchanges"]);
    await act(() => invalidatePath("/api/v1/exchanges"));
    await waitFor(() => expect(api.calls).toHaveLength(2));
  });

  it("builds the same keys as the hook kit, so both share one cache", async () => {
    const init = { params: { query: { exchange: "okx", type: "SWAP" as const } } };
    expect(queryOptionsFor("get", "/api/v1/tickers", init).queryKey).toEqual($api.queryOptions("get", "/api/v1/tickers", init).queryKey);
    expect(queryOptionsFor("get", "/api/v1/exchanges").queryKey).toEqual(["get", "/api/v1/exchanges"]);
    const api = fakeApi({ "/api/v1/tickers": () => jsonResponse({ tickers: [{ symbol: "BTC-USDT-SWAP" }] }) });
    setApiFetch(api.fetch);
    await queryClient.fetchQuery(queryOptionsFor("get", "/api/v1/tickers", init, { staleTime: 60_000 }));
    const { result } = renderHook(() => $api.useQuery("get", "/api/v1/tickers", init, { staleTime: 60_000 }), {
      wrapper: ({ children }: { children: ReactNode }) => <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>,
    });
    expect(result.current.data?.tickers?.[0]?.symbol).toBe("BTC-USDT-SWAP");
    expect(api.calls).toHaveLength(1);
  });

  it("polls only while the page is visible", async () => {
    const api = fakeApi({ "/api/v1/movers": () => jsonResponse({ movers: [], asOf: 1, stale: false }) });
    setApiFetch(api.fetch);
    setVisibility("visible");
    const client = createAppQueryClient();
    const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={client}>{children}</QueryClientProvider>;
    renderHook(() => useQuery({ ...marketQueries.movers(5), staleTime: 0, refetchInterval: 20 }), { wrapper });
    await waitFor(() => expect(api.calls.length).toBeGreaterThanOrEqual(3));
    act(() => setVisibility("hidden"));
    // Let a poll that was already in flight finish, then count.
    await new Promise((r) => setTimeout(r, 60));
    const hidden = api.calls.length;
    await new Promise((r) => setTimeout(r, 400));
    expect(api.calls.length).toBe(hidden);
    act(() => setVisibility("visible"));
    await waitFor(() => expect(api.calls.length).toBeGreaterThan(hidden + 1));
  });
});
