import { screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { queryClient } from "~/api/queries";
import { renderAt } from "~/features/auth/testing/render";
import { resetSession } from "~/lib/session";
import { SUBPAGE_KEYS } from "~/components/Nav";
import { chooseSubPage, DashboardScreen } from "./Dashboard";
import { resetMemberSync } from "./sync";
import { shareLink, totalOf } from "./Reward";
import { fakeApi, jsonResponse, member } from "./testing/fake-api";

beforeEach(() => {
  resetSession();
  resetMemberSync();
  queryClient.clear();
});
afterEach(() => resetSession());

describe("reward", () => {
  it("adds settled and unsettled exactly (no binary floating point)", () => {
    expect(totalOf({ coin: "USDT", settled: "0.1", unsettled: "0.2" })).toBe(
      "0.3",
    );
    expect(
      totalOf({
        coin: "BTC",
        settled: "0.00000001",
        unsettled: "12345678901234567.00000002",
      }),
    ).toBe("12345678901234567.00000003");
    expect(totalOf({ coin: "X", settled: "n/a", unsettled: "1" })).toBe("");
  });

  it("links to the register screen with the code", () => {
    expect(shareLink("AB3DEF7G", "http://127.0.0.1:8080")).toBe(
      "http://127.0.0.1:8080/regist?ref=AB3DEF7G",
    );
  });

  it("shows the code, the share link, totals per coin and the referees", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/referral": () =>
        jsonResponse({
          code: "AB3DEF7G",
          referees: [{ nickname: "Bob", joined_at: "2026-02-01T00:00:00Z" }],
          totals: [{ coin: "USDT", settled: "1234.5", unsettled: "0.25" }],
          rewards: [
            { id: "r2", amount: "0.25", coin: "USDT", state: "unsettled", created_at: "2026-02-03T00:00:00Z" },
            { id: "r1", amount: "1234.5", coin: "USDT", state: "settled", created_at: "2026-02-02T00:00:00Z", settled_at: "2026-02-04T00:00:00Z" },
          ],
        }),
    });
    renderAt("/dashboard?page=self_referral", {
      "/dashboard": DashboardScreen,
    });
    expect((await screen.findByTestId("referral-code")).textContent).toBe(
      "AB3DEF7G",
    );
    expect(screen.getByTestId("referral-link").textContent).toBe(
      `${window.location.origin}/regist?ref=AB3DEF7G`,
    );
    expect(screen.getByTestId("settled-USDT").textContent).toBe("1,234.5");
    expect(screen.getByTestId("unsettled-USDT").textContent).toBe("0.25");
    expect(screen.getByTestId("total-USDT").textContent).toBe("1,234.75");
    const rows = within(screen.getByTestId("reward-rows")).getAllByRole("row").slice(1);
    expect(rows.map((r) => r.getAttribute("data-state"))).toEqual(["unsettled", "settled"]);
    expect(rows[0]!.textContent).toContain("0.25 USDT");
    expect(rows[1]!.textContent).toContain("Settled");
    expect(
      within(screen.getByTestId("referees")).getByText(/Bob/),
    ).toBeTruthy();
    expect(
      screen.getByTestId("dash-tab-self_referral").getAttribute("aria-current"),
    ).toBe("page");
    expect(document.title).toBe("exhub | Dashboard - Reward");
  });
});

describe("sub-pages", () => {
  it("chooses the sub-page from the path, the query, then the remembered one", () => {
    expect(chooseSubPage("/dashboard/security", "profile", null)).toBe(
      "security",
    );
    expect(chooseSubPage("/dashboard", "self_referral", "security")).toBe(
      "self_referral",
    );
    expect(chooseSubPage("/dashboard", null, "security")).toBe("security");
    expect(chooseSubPage("/dashboard", "nonsense", "bogus")).toBe("profile");
  });

  it("opens the remembered sub-page and remembers the one shown", async () => {
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/referral": () =>
        jsonResponse({
          code: "AB3DEF7G",
          referees: [],
          totals: [],
          rewards: [],
        }),
    });
    window.localStorage.setItem(SUBPAGE_KEYS.dashboard, "self_referral");
    renderAt("/dashboard", { "/dashboard": DashboardScreen });
    expect(await screen.findByTestId("dashboard-reward")).toBeTruthy();
    expect(await screen.findByTestId("rewards-empty")).toBeTruthy();
    await waitFor(() =>
      expect(window.localStorage.getItem(SUBPAGE_KEYS.dashboard)).toBe(
        "self_referral",
      ),
    );
  });
  it("waits for a member's stored preferences and opens the sub-page remembered there", async () => {
    window.localStorage.setItem(SUBPAGE_KEYS.dashboard, "profile");
    let puts = 0;
    const api = fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/favorites": () => jsonResponse({ favorites: [] }),
      "GET /api/v1/me/preferences": () =>
        jsonResponse({
          version: 2,
          preferences: {
            theme: "dark",
            language: "en",
            sub_pages: { dashboard: "self_referral" },
          },
        }),
      "PUT /api/v1/me/preferences": () => {
        puts++;
        return jsonResponse({ title: "unexpected", status: 500 }, 500);
      },
      "GET /api/v1/me/referral": () =>
        jsonResponse({
          code: "AB3DEF7G",
          referees: [],
          totals: [],
          rewards: [],
        }),
    });
    renderAt("/dashboard", { "/dashboard": DashboardScreen });
    expect(await screen.findByTestId("dashboard-reward")).toBeTruthy();
    expect(screen.queryByTestId("dashboard-profile")).toBeNull();
    expect(window.localStorage.getItem(SUBPAGE_KEYS.dashboard)).toBe(
      "self_referral",
    );
    expect(puts).toBe(0);
    // Profile was never shown on the way.
    expect(api.calls.some((c) => c.path === "/api/v1/me/profile")).toBe(false);
  });
  it("a sub-page opened by its URL before the preferences are read is saved once they are", async () => {
    const saved: unknown[] = [];
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/favorites": () => jsonResponse({ favorites: [] }),
      "GET /api/v1/me/preferences": () =>
        jsonResponse({ version: 4, preferences: { sub_pages: { dashboard: "profile" } } }),
      "PUT /api/v1/me/preferences": (c) => {
        saved.push(c.body);
        return jsonResponse({ version: 5, preferences: (c.body as { preferences: unknown }).preferences });
      },
      "GET /api/v1/me/referral": () =>
        jsonResponse({ code: "AB3DEF7G", referees: [], totals: [], rewards: [] }),
    });
    renderAt("/dashboard?page=self_referral", { "/dashboard": DashboardScreen });
    expect(await screen.findByTestId("dashboard-reward")).toBeTruthy();
    await waitFor(() => expect(saved).toHaveLength(1));
    expect(saved[0]).toMatchObject({ version: 4, preferences: { sub_pages: { dashboard: "self_referral" } } });
  });
});
