import { act, fireEvent, render, screen } from "@testing-library/react";
import { createRoutesStub } from "react-router";
import { describe, expect, it, vi } from "vitest";
import { setApiFetch } from "~/api/client";
import { activateLocale } from "~/i18n";
import { AppProviders } from "~/providers";
import { ErrorBoundary, ErrorContent } from "~/root";
import { demoExchanges, fakeApi, jsonResponse } from "~/test/fixtures";

function renderFailingRoute(error: unknown) {
  setApiFetch(fakeApi({ "/api/v1/exchanges": () => jsonResponse({ exchanges: demoExchanges }) }).fetch);
  const Stub = createRoutesStub([
    {
      path: "/",
      HydrateFallback: () => null,
      Component: () => {
        throw error;
      },
      ErrorBoundary: ErrorBoundary as never,
    },
  ]);
  return render(<Stub initialEntries={["/"]} />);
}

describe("root error boundary", () => {
  it("shows the chunk message with a Reload action when a route chunk fails to load", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    renderFailingRoute(new TypeError("Failed to fetch dynamically imported module: https://exhub.test/assets/market-Cq2aZ81x.js"));
    expect(await screen.findByRole("heading", { name: "Could not load this page" })).toBeTruthy();
    const alert = screen.getByRole("alert");
    expect(alert.textContent).toContain("Loading chunk market failed. (error: https://exhub.test/assets/market-Cq2aZ81x.js)");
    expect(screen.getByRole("button", { name: "Reload" })).toBeTruthy();
    // The shell stays around the message: the page is never blank.
    expect(screen.getByRole("banner")).toBeTruthy();
  });

  it("reloads on Reload and speaks the page's language", async () => {
    const reload = vi.fn();
    render(
      <AppProviders>
        <ErrorContent error={new Error("Unable to preload CSS for /assets/trade-D9fj2kQp.css")} reload={reload} />
      </AppProviders>,
    );
    expect(screen.getByRole("alert").textContent).toContain("Loading CSS chunk trade failed.");
    fireEvent.click(screen.getByRole("button", { name: "Reload" }));
    expect(reload).toHaveBeenCalledTimes(1);
    await act(() => activateLocale("ja"));
    expect(screen.queryByRole("button", { name: "Reload" })).toBeNull();
    expect(screen.getByRole("heading").textContent).not.toBe("Could not load this page");
  });

  it("keeps the generic message for other errors", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    renderFailingRoute(new Error("boom"));
    expect(await screen.findByRole("heading", { name: "Something went wrong" })).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Reload" })).toBeNull();
  });
});
