import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { setApiFetch } from "~/api/client";
import { demoExchanges, jsonResponse } from "~/test/fixtures";
import { renderApp } from "~/test/render";

describe("language menu", () => {
  it("switches the page to Japanese and remembers it", async () => {
    setApiFetch(async () => jsonResponse({ exchanges: demoExchanges }));
    const { unmount } = renderApp("/");
    await screen.findByRole("heading", { name: "Reference Exchange" });
    expect(screen.getByText("Coming soon")).toBeTruthy();

    const menu = screen.getByRole("combobox", { name: "Language" });
    fireEvent.change(menu, { target: { value: "ja" } });

    expect(await screen.findByText("近日公開")).toBeTruthy();
    expect(screen.getByRole("heading", { name: "取引所" })).toBeTruthy();
    expect(screen.getByRole("combobox", { name: "言語" })).toBeTruthy();
    expect(screen.getAllByRole("link", { name: "現物" })).toHaveLength(1);
    expect(screen.queryByText("Coming soon")).toBeNull();
    expect(document.documentElement.lang).toBe("ja");
    expect(localStorage.getItem("exhub.locale")).toBe("ja");
    await waitFor(() => expect(document.title).toBe("exhub | ホーム"));

    // Back to English.
    unmount();
    renderApp("/");
    fireEvent.change(await screen.findByRole("combobox", { name: "言語" }), { target: { value: "en" } });
    expect(await screen.findByRole("heading", { name: "Exchanges" })).toBeTruthy();
    expect(localStorage.getItem("exhub.locale")).toBe("en");
    expect(document.documentElement.lang).toBe("en");
  });
});

describe("theme toggle", () => {
  it("starts dark, switches to light and keeps the choice", async () => {
    setApiFetch(async () => jsonResponse({ exchanges: [] }));
    const first = renderApp("/");
    const toggle = await screen.findByRole("button", { name: "Switch to light theme" });
    expect(document.documentElement.getAttribute("data-theme") ?? "dark").toBe("dark");

    fireEvent.click(toggle);
    expect(document.documentElement.getAttribute("data-theme")).toBe("light");
    expect(localStorage.getItem("exhub.theme")).toBe("light");
    expect(screen.getByRole("button", { name: "Switch to dark theme" })).toBeTruthy();

    // A new page load: the boot script restores the attribute, the toggle follows it.
    first.unmount();
    document.documentElement.removeAttribute("data-theme");
    const { bootScript } = await import("~/preferences");
    new Function(bootScript)();
    renderApp("/");
    expect(await screen.findByRole("button", { name: "Switch to dark theme" })).toBeTruthy();
    expect(document.documentElement.getAttribute("data-theme")).toBe("light");

    fireEvent.click(screen.getByRole("button", { name: "Switch to dark theme" }));
    expect(document.documentElement.getAttribute("data-theme")).toBe("dark");
    expect(localStorage.getItem("exhub.theme")).toBe("dark");
  });
});

describe("top bar", () => {
  it("has a skip link to the main content and a home logo", async () => {
    setApiFetch(async () => jsonResponse({ exchanges: [] }));
    renderApp("/spot/reference/BTCUSDT");
    const skip = await screen.findByRole("link", { name: "Skip to content" });
    expect(skip.getAttribute("href")).toBe("#main");
    expect(document.getElementById("main")).toBeTruthy();
    expect(screen.getByRole("link", { name: "exhub home" }).getAttribute("href")).toBe("/");
    expect(screen.getByTestId("coming-later").textContent).toBe(
      "Trading on reference BTCUSDT is coming in a later release.",
    );
  });
});
