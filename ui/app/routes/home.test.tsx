import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { setApiFetch } from "~/api/client";
import { ExchangeCarousel } from "~/components/Home";
import { REGISTER_ACCOUNT_KEY } from "~/lib/register";
import { demoExchanges, exchange, fakeApi, jsonResponse } from "~/test/fixtures";
import { renderApp } from "~/test/render";
import { render } from "@testing-library/react";
import { createRoutesStub } from "react-router";
import { AppProviders } from "~/providers";
import { resetSession, setMember } from "~/lib/session";

const movers = [
  { exchange: 1, exchangeSlug: "binance", type: "SWAP", symbol: "SOLUSDT", base: "SOL", last: "151.2", changePct24h: "-6.4", quoteVolume24h: "1", default: false },
  { exchange: 2, exchangeSlug: "okx", type: "SWAP", symbol: "BTC-USDT-SWAP", base: "BTC", last: "65000.1", changePct24h: "3.2", quoteVolume24h: "1", default: false },
];

function home(over: Record<string, (u: URL) => Response | Promise<Response>> = {}) {
  return fakeApi({
    "/api/v1/exchanges": () => jsonResponse({ exchanges: demoExchanges }),
    "/api/v1/movers": () => jsonResponse({ movers, asOf: 1, stale: false }),
    ...over,
  });
}

function card(name: string): HTMLElement {
  const heading = screen.getByRole("heading", { name });
  const li = heading.closest("li");
  if (!li) throw new Error(`no card for ${name}`);
  return li;
}

describe("home page", () => {
  it("lists the exchanges from the API with their status", async () => {
    const api = home();
    setApiFetch(api.fetch);
    renderApp("/");

    // The first render of a test file also loads the modules: a longer wait.
    expect(await screen.findByRole("heading", { name: "Reference Exchange" }, { timeout: 10_000 })).toBeTruthy();
    // The shell's menus and the page share one exchange request.
    expect(api.calls.filter((c) => c.startsWith("GET /api/v1/exchanges"))).toHaveLength(1);
    expect(screen.getAllByRole("listitem").filter((li) => li.classList.contains("exchange-card"))).toHaveLength(3);

    const ref = card("Reference Exchange");
    expect(within(ref).getByTestId("status-badge").textContent).toBe("Available");
    expect(within(ref).getByRole("link", { name: "Spot" }).getAttribute("href")).toBe("/spot/reference");
    expect(within(ref).getByRole("link", { name: "Futures" }).getAttribute("href")).toBe("/futures/reference");

    const bybit = card("Bybit");
    expect(within(bybit).getByTestId("status-badge").textContent).toBe("Coming soon");
    const futures = within(bybit).getByText("Futures");
    expect(futures.closest("a")).toBeNull();
    expect(futures.getAttribute("aria-disabled")).toBe("true");

    const okx = card("OKX");
    expect(within(okx).getByTestId("status-badge").textContent).toBe("Unavailable");
    expect(within(okx).queryByRole("link", { name: "Futures" })).toBeNull();

    expect(document.title).toBe("exhub | Home");
  });

  it("renders logos as images, never as markup", async () => {
    const hostile = `<svg xmlns="http://www.w3.org/2000/svg"><script>window.__pwned = 1</script><rect width="1" height="1"/></svg>`;
    setApiFetch(home({ "/api/v1/exchanges": () => jsonResponse({ exchanges: [exchange({ key: 7, slug: "x", name: "Xchg", logoSvg: hostile })] }) }).fetch);
    const { container } = renderApp("/");
    await screen.findByRole("heading", { name: "Xchg" });
    const img = container.querySelector("img.exchange-logo");
    expect(img?.getAttribute("src")).toBe(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(hostile)}`);
    expect(container.querySelector("svg script")).toBeNull();
    expect((window as { __pwned?: number }).__pwned).toBeUndefined();
  });

  it("shows a network error with a retry that reloads the list", async () => {
    let calls = 0;
    setApiFetch(
      home({
        "/api/v1/exchanges": () => {
          calls++;
          if (calls === 1) throw new TypeError("Failed to fetch");
          return jsonResponse({ exchanges: demoExchanges });
        },
      }).fetch,
    );
    renderApp("/");
    const alert = await screen.findByTestId("exchange-list-error");
    expect(within(alert).getByText("Network anomaly")).toBeTruthy();
    fireEvent.click(within(alert).getByRole("button", { name: "Retry" }));
    // The retry runs the route's loader again: allow for a busy machine.
    expect(await screen.findByRole("heading", { name: "Reference Exchange" }, { timeout: 5_000 })).toBeTruthy();
    expect(screen.queryByTestId("exchange-list-error")).toBeNull();
  });

  it("shows a loading state until the list arrives", async () => {
    let release: (r: Response) => void = () => {};
    setApiFetch(home({ "/api/v1/exchanges": () => new Promise<Response>((r) => (release = r)) }).fetch);
    renderApp("/");
    expect(await screen.findByText("Loading exchanges…")).toBeTruthy();
    release(jsonResponse({ exchanges: [] }));
    expect(await screen.findByText("No exchanges are available yet.")).toBeTruthy();
  });

  it("shows the movers as tiles that open the futures market", async () => {
    setApiFetch(home().fetch);
    renderApp("/");
    const list = await screen.findByTestId("movers");
    const tiles = within(list).getAllByRole("link");
    expect(tiles).toHaveLength(2);
    expect(tiles[0]!.getAttribute("href")).toBe("/futures/binance/SOLUSDT");
    expect(tiles[1]!.getAttribute("href")).toBe("/futures/okx/BTC-USDT-SWAP");
    expect(within(tiles[0]!).getByText("-6.40%").className).toContain("down");
    expect(within(tiles[1]!).getByText("+3.20%").className).toContain("up");
  });

  it("has a FAQ of four with the first open", async () => {
    setApiFetch(home().fetch);
    renderApp("/");
    const faq = await screen.findByTestId("faq");
    const items = faq.querySelectorAll("details");
    expect(items).toHaveLength(4);
    expect([...items].map((d) => d.open)).toEqual([true, false, false, false]);
  });
});

describe("quick register", () => {
  it("stores the account and goes to /regist on Enter", async () => {
    setApiFetch(home().fetch);
    renderApp("/");
    const box = await screen.findByTestId("quick-register");
    const input = within(box).getByRole("textbox", { name: "E-mail or phone number" });
    fireEvent.change(input, { target: { value: "  trader@example.com " } });
    fireEvent.submit(input.closest("form")!);
    expect(await screen.findByRole("heading", { name: "Sign Up" })).toBeTruthy();
    expect(localStorage.getItem(REGISTER_ACCOUNT_KEY)).toBe("trader@example.com");
  });

  it("ignores an empty entry", async () => {
    setApiFetch(home().fetch);
    renderApp("/");
    const box = await screen.findByTestId("quick-register");
    fireEvent.change(within(box).getByRole("textbox"), { target: { value: "   " } });
    fireEvent.click(within(box).getByRole("button", { name: "Sign Up" }));
    await new Promise((r) => setTimeout(r, 20));
    expect(localStorage.getItem(REGISTER_ACCOUNT_KEY)).toBeNull();
    expect(screen.getByTestId("quick-register")).toBeTruthy();
    expect(screen.queryByRole("heading", { name: "Sign Up" })).toBeNull();
  });
});

describe("signed-in home", () => {
  it("shows a member the balance card beside the movers instead of the quick registration", async () => {
    setApiFetch(
      home({
        "/api/v1/home/summary": () =>
          jsonResponse({ total_usdt: "250", day_start: 1, time: 2, realized: "0", unrealized: "0", change: "0", change_pct: "0", exchanges: [] }),
      }).fetch,
    );
    setMember({ id: "m1", email_verified: true, phone_verified: false, aal: "aal1", two_factor: { totp: false, lookup_secret: false } });
    try {
      renderApp("/");
      const total = await screen.findByTestId("home-balance-total", {}, { timeout: 10_000 });
      expect(total.textContent).toBe("250.00 USDT");
      const top = total.closest(".home-top");
      expect(top?.classList.contains("home-top--member")).toBe(true);
      expect(within(top as HTMLElement).getByRole("heading", { name: "Top movers (24h)" })).toBeTruthy();
      expect(screen.queryByTestId("quick-register")).toBeNull();
    } finally {
      resetSession();
    }
  });

  it("shows a visitor the quick registration and no balance card", async () => {
    const api = home();
    setApiFetch(api.fetch);
    renderApp("/");
    expect(await screen.findByTestId("quick-register")).toBeTruthy();
    expect(await screen.findByRole("heading", { name: "Top movers (24h)" })).toBeTruthy();
    expect(screen.queryByTestId("home-balance")).toBeNull();
    expect(api.calls.some((c) => c.includes("/home/summary"))).toBe(false);
  });
});

describe("exchange carousel", () => {
  function renderCarousel() {
    const Stub = createRoutesStub([
      {
        path: "/",
        Component: () => (
          <AppProviders>
            <ExchangeCarousel exchanges={[...demoExchanges, exchange({ key: 9, slug: "four", name: "Fourth" })]} />
          </AppProviders>
        ),
      },
    ]);
    return render(<Stub initialEntries={["/"]} />);
  }
  const visibleSlide = () => [...document.querySelectorAll<HTMLElement>("[data-testid=carousel-slide]")].findIndex((s) => !s.hidden);

  it("shows three slides and advances every 1500 ms, pausing on hover", async () => {
    vi.useFakeTimers();
    try {
      renderCarousel();
      expect(document.querySelectorAll<HTMLElement>("[data-testid=carousel-slide]")).toHaveLength(3);
      expect(visibleSlide()).toBe(0);
      act(() => vi.advanceTimersByTime(1499));
      expect(visibleSlide()).toBe(0);
      act(() => vi.advanceTimersByTime(1));
      expect(visibleSlide()).toBe(1);
      act(() => vi.advanceTimersByTime(1500 * 2));
      expect(visibleSlide()).toBe(0);
      fireEvent.mouseEnter(screen.getByTestId("carousel"));
      act(() => vi.advanceTimersByTime(6000));
      expect(visibleSlide()).toBe(0);
      fireEvent.mouseLeave(screen.getByTestId("carousel"));
      act(() => vi.advanceTimersByTime(1500));
      expect(visibleSlide()).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("does not autoplay for reduced motion", async () => {
    vi.useFakeTimers();
    const mm = vi.fn((q: string) => ({ matches: q.includes("reduce"), media: q, addEventListener() {}, removeEventListener() {} }));
    vi.stubGlobal("matchMedia", mm);
    try {
      renderCarousel();
      act(() => vi.advanceTimersByTime(6000));
      expect(visibleSlide()).toBe(0);
      fireEvent.click(screen.getByRole("button", { name: "Show slide 3" }));
      expect(visibleSlide()).toBe(2);
    } finally {
      vi.unstubAllGlobals();
      vi.useRealTimers();
    }
  });
});

void waitFor;
