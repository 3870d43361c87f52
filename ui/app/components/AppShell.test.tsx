import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { setApiFetch } from "~/api/client";
import { setKratosFetch } from "~/features/auth/kratos";
import { fakeKratos, json } from "~/features/auth/testing/kratos-fake";
import { demoExchanges, jsonResponse } from "~/test/fixtures";
import { links } from "~/lib/links";
import { setSession, SESSION_TOKEN_KEY } from "~/lib/session";
import { within } from "@testing-library/react";
import { renderApp } from "~/test/render";

describe("language menu", () => {
  it("switches the page to Japanese and remembers it", async () => {
    setApiFetch(async () => jsonResponse({ exchanges: demoExchanges }));
    const { unmount } = renderApp("/");
    // The first render of a test file also loads the modules: a longer wait.
    await screen.findByRole("heading", { name: "Reference Exchange" }, { timeout: 10_000 });
    expect(screen.getByText("Coming soon")).toBeTruthy();

    const menu = screen.getByRole("combobox", { name: "Language" });
    fireEvent.change(menu, { target: { value: "ja" } });

    // The Japanese catalog is loaded on demand: give it longer than the default second on a busy machine.
    expect(await screen.findByText("近日公開", {}, { timeout: 10_000 })).toBeTruthy();
    expect(screen.getByRole("heading", { name: "取引所" })).toBeTruthy();
    expect(screen.getByRole("combobox", { name: "言語" })).toBeTruthy();
    expect(within(screen.getByTestId("exchange-list")).getAllByRole("link", { name: "現物" })).toHaveLength(1);
    // The X link is the Japanese account in Japanese.
    expect(within(screen.getByTestId("community")).getByRole("link", { name: "X" }).getAttribute("href")).toBe(links.xJapan);
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

const api = async (req: Request) =>
  new URL(req.url).pathname === "/api/v1/exchanges" ? jsonResponse({ exchanges: demoExchanges }) : jsonResponse({ movers: [] });

describe("navigation", () => {
  it("offers markets, spot and futures menus from the plugins, and log in / sign up when logged out", async () => {
    setApiFetch(api);
    renderApp("/marketData");
    expect(await screen.findByRole("heading", { name: "Market Data" })).toBeTruthy();
    await waitFor(() => expect(document.title).toBe("exhub | Market Data"));
    fireEvent.click(within(screen.getByTestId("nav-markets")).getByRole("button", { name: "Markets" }));
    expect(screen.getByRole("link", { name: "Market" }).getAttribute("href")).toBe("/market");
    fireEvent.click(within(screen.getByTestId("nav-futures")).getByRole("button", { name: "Futures" }));
    await waitFor(() => expect(within(screen.getByTestId("nav-futures")).getAllByRole("listitem").length).toBeGreaterThan(0));
    const menu = screen.getByTestId("nav-futures");
    expect(within(menu).getByRole("link", { name: "Reference Exchange" }).getAttribute("href")).toBe("/futures/reference");
    // The coming-soon exchange is listed but does nothing.
    const bybit = within(menu).getByText("Bybit");
    expect(bybit.closest("a")).toBeNull();
    expect(within(menu).getByText("Coming soon")).toBeTruthy();
    expect(screen.getAllByRole("link", { name: "Log In" })[0]!.getAttribute("href")).toBe("/login");
    expect(screen.getAllByRole("link", { name: "Sign Up" })[0]!.getAttribute("href")).toBe("/regist");
    expect(screen.queryByRole("button", { name: "Log out" })).toBeNull();
    expect(within(screen.getByTestId("community")).getByRole("link", { name: "X" }).getAttribute("href")).toBe(links.x);
  });

  it("redirects protected pages to /login without a session", async () => {
    setApiFetch(api);
    renderApp("/wallet");
    expect(await screen.findByRole("heading", { name: "Log In" })).toBeTruthy();
    await waitFor(() => expect(document.title).toBe("exhub | Log In"));
  });

  it("shows the member menus with a session and logs out after confirmation", async () => {
    setApiFetch(api);
    setSession("tok", { tid: "42", tisjp: true });
    renderApp("/history");
    expect(await screen.findByRole("heading", { name: "History" })).toBeTruthy();
    expect(screen.getByRole("link", { name: "Deposit" }).getAttribute("href")).toContain("/wallet?page=deposit");
    expect(screen.queryByRole("link", { name: "Log In" })).toBeNull();
    // A Japanese account gets the Japanese X link even in English.
    expect(within(screen.getByTestId("community")).getByRole("link", { name: "X" }).getAttribute("href")).toBe(links.xJapan);
    fireEvent.click(screen.getByRole("button", { name: "History" }));
    fireEvent.click(await screen.findByRole("link", { name: "Funding history" }));
    expect(localStorage.getItem("exhub.history.page")).toBe("funding_history");

    // Logging out goes through Kratos' logout flow; a failure keeps the
    // member signed in and says so.
    let kratosUp = false;
    const kratos = fakeKratos({
      "GET /self-service/logout/browser": () =>
        kratosUp ? json({ logout_token: "LT", logout_url: "http://127.0.0.1/.ory/self-service/logout?token=LT" }) : json({ error: { code: 500 } }, 500),
      "GET /self-service/logout": () => new Response(null, { status: 204 }),
    });
    setKratosFetch(kratos.fetch);
    fireEvent.click(screen.getByRole("button", { name: "Log out" }));
    // The dialog is loaded on first use.
    const dialog = await screen.findByRole("alertdialog", {}, { timeout: 10_000 });
    expect(within(dialog).getByText("Do you want to log out?")).toBeTruthy();
    fireEvent.click(within(dialog).getByRole("button", { name: "OK" }));
    expect(await within(dialog).findByText("Logging out failed. Please try again.")).toBeTruthy();
    expect(screen.getByRole("alertdialog")).toBe(dialog);
    kratosUp = true;
    fireEvent.click(within(dialog).getByRole("button", { name: "OK" }));
    expect(await screen.findByRole("heading", { name: "Log In" })).toBeTruthy();
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(kratos.calls.map((c) => c.path)).toEqual(["/self-service/logout/browser", "/self-service/logout/browser", "/self-service/logout"]);
    expect(localStorage.getItem(SESSION_TOKEN_KEY)).toBeNull();
    setKratosFetch(undefined);
  });

  it("opens the phone drawer with collapsible groups", async () => {
    setApiFetch(api);
    renderApp("/about");
    const toggle = await screen.findByTestId("drawer-toggle");
    fireEvent.click(toggle);
    // The drawer is loaded on first use.
    const drawer = await screen.findByTestId("drawer", {}, { timeout: 10_000 });
    expect(drawer.getAttribute("role")).toBe("dialog");
    const groups = within(drawer).getAllByRole("button", { expanded: false });
    expect(groups.map((b) => b.textContent)).toEqual(["Markets", "Spot", "Futures"]);
    // A group opens on its button and shows its links.
    fireEvent.click(groups[0]!);
    expect(groups[0]!.getAttribute("aria-expanded")).toBe("true");
    expect(within(drawer).getByRole("link", { name: "Market Data" }).getAttribute("href")).toBe("/marketData");
    // Focus is inside the drawer; Escape closes it.
    await waitFor(() => expect(drawer.contains(document.activeElement)).toBe(true));
    fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("drawer")).toBeNull());
  });

  it("has a side widget with announcement, help center and contact links", async () => {
    setApiFetch(api);
    renderApp("/event");
    fireEvent.click(await screen.findByTestId("side-widget"));
    const menu = document.getElementById("side-widget-menu")!;
    expect(within(menu).getAllByRole("link").map((a) => a.textContent)).toEqual(["Announcement", "Help Center", "Contact us"]);
    expect(within(menu).getByRole("link", { name: "Contact us" }).getAttribute("href")).toBe(links.contact);
  });
});

describe("footer links", () => {
  it("has no empty or '#' links, and shows unset deployment pages as not configured", async () => {
    setApiFetch(async () => jsonResponse({ exchanges: demoExchanges }));
    renderApp("/");
    await screen.findByRole("heading", { name: "Reference Exchange" });
    const footer = document.querySelector("footer")!;
    for (const a of footer.querySelectorAll("a")) {
      const href = a.getAttribute("href") ?? "";
      expect(href === "" || href.startsWith("#"), `${a.textContent}: ${href}`).toBe(false);
    }
    // Terms and privacy have no default destination.
    expect(links.terms).toBeNull();
    expect(within(footer).queryByRole("link", { name: "Terms of Use" })).toBeNull();
    const terms = within(footer).getByText("Terms of Use");
    expect(terms.closest("[data-setting]")?.getAttribute("data-setting")).toBe("VITE_EXHUB_TERMS_URL");
    expect(terms.closest("[data-setting]")?.textContent).toContain("(not configured)");
    expect(within(footer).getByText("Privacy Policy").closest("[data-setting]")?.getAttribute("data-setting")).toBe("VITE_EXHUB_PRIVACY_URL");
    // The project's own pages have defaults.
    expect(within(footer).getByRole("link", { name: "About Us" }).getAttribute("href")).toBe(links.about);
    expect(within(footer).getByRole("link", { name: "Help Center" }).getAttribute("href")).toBe(links.helpCenter);
  });
});
