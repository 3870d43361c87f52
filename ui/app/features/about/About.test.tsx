import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { setApiFetch } from "~/api/client";
import { demoExchanges, fakeApi, jsonResponse } from "~/test/fixtures";
import { renderApp } from "~/test/render";
import { activateLocale } from "~/i18n";

describe("about page", () => {
  it("says what exhub is and lists this deployment's exchanges with their status", async () => {
    setApiFetch(fakeApi({ "/api/v1/exchanges": () => jsonResponse({ exchanges: demoExchanges }) }).fetch);
    renderApp("/about");
    expect(await screen.findByRole("heading", { level: 1, name: "About exhub" })).toBeTruthy();
    const page = screen.getByTestId("about-page");
    expect(await within(page).findByRole("heading", { name: "Bybit" })).toBeTruthy();
    expect(within(page).getAllByTestId("status-badge").map((b) => b.textContent)).toContain("Coming soon");
    expect(within(page).getByRole("link", { name: "Market Data" }).getAttribute("href")).toBe("/marketData");
    expect(document.title).toBe("exhub | About us");
  });

  it("is translated", async () => {
    setApiFetch(fakeApi({ "/api/v1/exchanges": () => jsonResponse({ exchanges: demoExchanges }) }).fetch);
    await activateLocale("ja");
    renderApp("/about");
    expect(await screen.findByRole("heading", { level: 1, name: "exhub について" })).toBeTruthy();
  });
});
