import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { setApiFetch } from "~/api/client";
import { setMember } from "~/lib/session";
import { AppProviders } from "~/providers";
import { fakeApi, jsonResponse } from "~/test/fixtures";
import { MemoryRouter } from "react-router";
import { HomeBalance, todayChange, utcDayStart } from "./Balance";

const member = {
  id: "m1",
  email_verified: true,
  phone_verified: false,
  aal: "aal1",
  two_factor: { totp: false, lookup_secret: false },
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

describe("home balance", () => {
  it("computes today's change exactly", () => {
    expect(utcDayStart(Date.UTC(2026, 10, 25, 18, 30))).toBe(Date.UTC(2026, 10, 25));
    expect(todayChange("1100", "60.1", ["39.9", ""])).toEqual({ change: "100", pct: "10" });
    expect(todayChange("0.3", "0.1", ["0.2"])).toEqual({ change: "0.3", pct: null });
    expect(todayChange("100", "-0.1", ["-0.2"]).change).toBe("-0.3");
  });

  it("shows the balance and today's change for a member", async () => {
    const api = fakeApi({
      "/api/v1/wallet/overview": () =>
        jsonResponse({
          total_usdt: "10150.5",
          time: 1,
          exchanges: [
            { exchange: "binance", status: "ok", total_usdt: "10000", wallets: [], unpriced: [] },
            { exchange: "okx", status: "no_account", total_usdt: "0", wallets: [], unpriced: [] },
          ],
        }),
      "/api/v1/history/rpnl": () =>
        jsonResponse({ from: 0, to: 1, total_rpnl: "100.25", equity: "10150.5", exchanges: [], failed: [] }),
      "/api/v1/positions": (u) =>
        jsonResponse({
          positions:
            u.searchParams.get("exchange") === "binance"
              ? [{ symbol: "BTCUSDT", position_side: "NET", qty: "1", unrealized_pnl: "50.25" }]
              : [],
        }),
    });
    setApiFetch(api.fetch);
    setMember(member);
    renderBalance();
    expect((await screen.findByTestId("home-balance-total", {}, { timeout: 10_000 })).textContent).toContain("10,150.50");
    const change = await screen.findByTestId("home-balance-change");
    // 100.25 realized + 50.25 unrealized = 150.5 on a day that started at 10000: +1.51%.
    expect(change.textContent).toContain("+150.50 USDT");
    expect(change.textContent).toContain("+1.51%");
    expect(change.className).toContain("up");
    expect(api.calls.some((c) => c.startsWith("GET /api/v1/positions?exchange=okx"))).toBe(false);
    expect(screen.getByRole("link", { name: "Deposit" }).getAttribute("href")).toBe("/wallet?page=deposit");
  });

  it("shows nothing to a visitor", () => {
    const api = fakeApi({});
    setApiFetch(api.fetch);
    const { container } = renderBalance();
    expect(container.querySelector("[data-testid=home-balance]")).toBeNull();
    expect(api.calls.filter((c) => c.includes("/wallet/") || c.includes("/history/"))).toEqual([]);
  });
});
