import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { setApiFetch } from "~/api/client";
import { demoExchanges, exchange, jsonResponse } from "~/test/fixtures";
import { renderApp } from "~/test/render";

function card(name: string): HTMLElement {
  const heading = screen.getByRole("heading", { name });
  const li = heading.closest("li");
  if (!li) throw new Error(`no card for ${name}`);
  return li;
}

describe("home page", () => {
  it("lists the exchanges from the API with their status", async () => {
    const fetch = vi.fn(async (req: Request) => {
      expect(req.method).toBe("GET");
      expect(new URL(req.url).pathname).toBe("/api/v1/exchanges");
      return jsonResponse({ exchanges: demoExchanges });
    });
    setApiFetch(fetch);
    renderApp("/");

    expect(await screen.findByRole("heading", { name: "Reference Exchange" })).toBeTruthy();
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(screen.getAllByRole("listitem").filter((li) => li.classList.contains("exchange-card"))).toHaveLength(3);

    const ref = card("Reference Exchange");
    expect(within(ref).getByTestId("status-badge").textContent).toBe("Available");
    expect(within(ref).getByRole("link", { name: "Spot" }).getAttribute("href")).toBe("/spot/reference");
    expect(within(ref).getByRole("link", { name: "Futures" }).getAttribute("href")).toBe("/futures/reference");
    expect(within(ref).getByText("Plugin 1.0.0")).toBeTruthy();

    const bybit = card("Bybit");
    expect(within(bybit).getByTestId("status-badge").textContent).toBe("Coming soon");
    // The coming-soon futures entry is shown but is not a link and does nothing.
    const futures = within(bybit).getByText("Futures");
    expect(futures.closest("a")).toBeNull();
    expect(futures.getAttribute("aria-disabled")).toBe("true");
    expect(within(bybit).queryAllByRole("link").filter((a) => a.textContent === "Futures")).toHaveLength(0);

    const okx = card("OKX");
    expect(within(okx).getByTestId("status-badge").textContent).toBe("Unavailable");
    expect(within(okx).queryByRole("link", { name: "Futures" })).toBeNull();
    expect(within(okx).queryByText("Spot")).toBeNull();

    expect(document.title).toBe("exhub | Home");
  });

  it("renders logos as images, never as markup", async () => {
    const hostile = `<svg xmlns="http://www.w3.org/2000/svg"><script>window.__pwned = 1</script><rect width="1" height="1"/></svg>`;
    setApiFetch(async () => jsonResponse({ exchanges: [exchange({ key: 7, slug: "x", name: "Xchg", logoSvg: hostile })] }));
    const { container } = renderApp("/");
    await screen.findByRole("heading", { name: "Xchg" });
    const img = container.querySelector("img.exchange-logo");
    expect(img?.getAttribute("src")).toBe(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(hostile)}`);
    expect(container.querySelector("svg script")).toBeNull();
    expect((window as { __pwned?: number }).__pwned).toBeUndefined();
  });

  it("shows a network error with a retry that reloads the list", async () => {
    let calls = 0;
    setApiFetch(async () => {
      calls++;
      if (calls === 1) throw new TypeError("Failed to fetch");
      return jsonResponse({ exchanges: demoExchanges });
    });
    renderApp("/");
    const alert = await screen.findByRole("alert");
    expect(within(alert).getByText("Network anomaly")).toBeTruthy();
    expect(screen.queryByRole("heading", { name: "Reference Exchange" })).toBeNull();

    fireEvent.click(within(alert).getByRole("button", { name: "Retry" }));
    expect(await screen.findByRole("heading", { name: "Reference Exchange" })).toBeTruthy();
    expect(calls).toBe(2);
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("treats an HTTP error as a network anomaly", async () => {
    setApiFetch(async () => jsonResponse({ title: "Bad Gateway", status: 502, detail: "bff down" }, 502));
    renderApp("/");
    expect(await screen.findByText("Network anomaly")).toBeTruthy();
  });

  it("shows a loading state until the list arrives", async () => {
    let release: (r: Response) => void = () => {};
    setApiFetch(() => new Promise<Response>((r) => (release = r)));
    renderApp("/");
    expect(await screen.findByText("Loading exchanges…")).toBeTruthy();
    release(jsonResponse({ exchanges: [] }));
    expect(await screen.findByText("No exchanges are available yet.")).toBeTruthy();
    await waitFor(() => expect(screen.queryByText("Loading exchanges…")).toBeNull());
  });

  it("opens the trading placeholder from an exchange entry", async () => {
    setApiFetch(async () => jsonResponse({ exchanges: demoExchanges }));
    renderApp("/");
    const ref = await screen.findByRole("heading", { name: "Reference Exchange" });
    fireEvent.click(within(ref.closest("li")!).getByRole("link", { name: "Futures" }));
    expect(await screen.findByRole("heading", { name: "Futures trading" })).toBeTruthy();
    expect(screen.getByTestId("coming-later").textContent).toBe("Trading on reference is coming in a later release.");
    await waitFor(() => expect(document.title).toBe("exhub | Futures trading"));
  });
});
