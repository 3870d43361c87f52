import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setApiFetch } from "~/api/client";
import { readPreferences, resetMemberSync } from "~/features/dashboard/sync";
import { resetSession, setMember } from "~/lib/session";
import { AppProviders } from "~/providers";
import { fakeApi, jsonResponse } from "~/test/fixtures";
import { HIDE_BALANCES_KEY, HomeBalance, type HomeSummary } from "./Balance";

const member = {
  id: "m1",
  email_verified: true,
  phone_verified: false,
  aal: "aal1",
  two_factor: { totp: false, lookup_secret: false },
};

const summary: HomeSummary = {
  total_usdt: "10150.5",
  day_start: 1,
  time: 2,
  realized: "100.25",
  unrealized: "50.25",
  change: "150.5",
  change_pct: "1.51",
  exchanges: [
    {
      exchange: "binance",
      status: "ok",
      balance_usdt: "10150.5",
      realized_pnl: "110",
      fees: "10.5",
      funding: "0.75",
      realized: "100.25",
      unrealized: "50.25",
      change: "150.5",
      unvalued: [],
      funding_missing: false,
      truncated: false,
    },
    {
      exchange: "okx",
      status: "error",
      error: { part: "change", code: "exchange_unavailable", detail: "down" },
      balance_usdt: "0",
      realized_pnl: "",
      fees: "",
      funding: "",
      realized: "",
      unrealized: "",
      change: "",
      unvalued: [],
      funding_missing: false,
      truncated: false,
    },
  ],
};

function renderBalance() {
  return render(
    <MemoryRouter>
      <AppProviders>
        <HomeBalance />
      </AppProviders>
    </MemoryRouter>,
  );
}

beforeEach(() => {
  resetSession();
  resetMemberSync();
});
afterEach(() => {
  resetSession();
  resetMemberSync();
  vi.restoreAllMocks();
});

describe("home balance", () => {
  it("shows the balance, today's change with its split, a failed exchange, and the wallet links", async () => {
    const api = fakeApi({ "/api/v1/home/summary": () => jsonResponse(summary) });
    setApiFetch(api.fetch);
    setMember(member);
    renderBalance();
    expect((await screen.findByTestId("home-balance-total", {}, { timeout: 10_000 })).textContent).toBe("10,150.50 USDT");
    const change = screen.getByTestId("home-balance-change");
    expect(change.textContent).toBe("+150.50 USDT (+1.51%)");
    expect(change.className).toContain("up");
    expect(screen.getByTestId("home-balance-realized").textContent).toBe("+100.25 USDT");
    expect(screen.getByTestId("home-balance-unrealized").textContent).toBe("+50.25 USDT");
    expect(screen.getByTestId("home-balance-failed").textContent).toContain("okx");
    expect(screen.getByRole("link", { name: "Deposit" }).getAttribute("href")).toBe("/wallet?page=deposit");
    expect(screen.getByRole("link", { name: "Wallet" }).getAttribute("href")).toBe("/wallet?page=overview");
  });

  it("shows a loss in the down colour, without a percentage when the day started at nothing", async () => {
    const loss = { ...summary, realized: "-0.3", unrealized: "0", change: "-0.3", change_pct: "", exchanges: [] };
    setApiFetch(fakeApi({ "/api/v1/home/summary": () => jsonResponse(loss) }).fetch);
    setMember(member);
    renderBalance();
    const change = await screen.findByTestId("home-balance-change", {}, { timeout: 10_000 });
    expect(change.textContent).toBe("-0.30 USDT");
    expect(change.className).toContain("down");
    expect(screen.queryByTestId("home-balance-failed")).toBeNull();
  });

  it("masks the figures with the eye and remembers the choice in this browser and the member's preferences", async () => {
    setApiFetch(fakeApi({ "/api/v1/home/summary": () => jsonResponse(summary) }).fetch);
    // The member's saved preferences hide balances.
    const puts: unknown[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      const req = input as Request;
      if (new URL(req.url).pathname !== "/api/v1/me/preferences") return jsonResponse({ status: 404 }, 404);
      if (req.method === "PUT") {
        const body = (await req.json()) as { preferences: unknown };
        puts.push(body.preferences);
        return jsonResponse({ version: 4, preferences: body.preferences });
      }
      return jsonResponse({ version: 3, preferences: { theme: "dark", hide_balances: true } });
    });
    await readPreferences("m1");
    setMember(member);
    renderBalance();
    const total = await screen.findByTestId("home-balance-total", {}, { timeout: 10_000 });
    expect(total.textContent).toBe("****** USDT");
    expect(screen.getByTestId("home-balance-change").textContent).toBe("****** USDT");
    expect(screen.getByTestId("home-balance-realized").textContent).toBe("****** USDT");
    const eye = screen.getByRole("button", { name: "Show balances" });
    expect(eye.getAttribute("aria-pressed")).toBe("true");
    fireEvent.click(eye);
    expect(total.textContent).toBe("10,150.50 USDT");
    expect(screen.getByRole("button", { name: "Hide balances" }).getAttribute("aria-pressed")).toBe("false");
    expect(localStorage.getItem(HIDE_BALANCES_KEY)).toBe("0");
    await waitFor(() => expect(puts).toEqual([{ theme: "dark", hide_balances: false }]));
  });

  it("shows nothing to a visitor and asks nothing", () => {
    const api = fakeApi({});
    setApiFetch(api.fetch);
    const { container } = renderBalance();
    expect(container.querySelector("[data-testid=home-balance]")).toBeNull();
    expect(api.calls.filter((c) => c.includes("/home/"))).toEqual([]);
  });

  it("offers a refresh when the summary cannot be read", async () => {
    let fail = true;
    setApiFetch(
      fakeApi({
        "/api/v1/home/summary": () => (fail ? jsonResponse({ status: 400, title: "Bad Request" }, 400) : jsonResponse(summary)),
      }).fetch,
    );
    setMember(member);
    renderBalance();
    expect((await screen.findByRole("alert", {}, { timeout: 10_000 })).textContent).toContain("Network anomaly");
    fail = false;
    fireEvent.click(screen.getByRole("button", { name: "Refresh" }));
    expect((await screen.findByTestId("home-balance-total")).textContent).toBe("10,150.50 USDT");
  });
});
