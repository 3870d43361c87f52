import { act, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { queryClient } from "~/api/queries";
import { renderAt } from "~/features/auth/testing/render";
import { resetExchanges } from "~/lib/exchanges";
import { resetSession } from "~/lib/session";
import { DashboardScreen } from "./Dashboard";
import { resetMemberSync } from "./sync";
import { fakeApi, jsonResponse, member, type ApiHandler } from "./testing/fake-api";

const exchange = (slug: string, name: string, key: number) => ({
  key,
  slug,
  name,
  logoSvg: "",
  status: "available",
  pluginState: "running",
  pluginVersion: "1.0.0",
  marketTypes: ["SPOT", "SWAP"],
  website: "",
  capabilities: {},
});
const EXCHANGES = [exchange("binance", "Binance", 1), exchange("okx", "OKX", 2), exchange("bybit", "Bybit", 3)];

type Account = Record<string, unknown> & { id: string; exchange: string };
const account = (over: Partial<Account> & { id: string; exchange: string }): Account => ({
  mode: "linked",
  name: over.exchange,
  key_last4: "1234",
  permissions: { read: true, trade: true, transfer: false },
  status: "active",
  created_at: "2026-03-01T10:00:00Z",
  updated_at: "2026-03-01T10:00:00Z",
  ...over,
});

const problem = (status: number, code: string, extra: Record<string, unknown> = {}) =>
  jsonResponse({ title: code, status, code, ...extra }, status);

function serve(accounts: Account[], routes: Record<string, ApiHandler> = {}) {
  return fakeApi({
    "GET /api/v1/me": () => jsonResponse(member),
    "GET /api/v1/me/favorites": () => jsonResponse({ favorites: [] }),
    "GET /api/v1/me/preferences": () => jsonResponse({ version: 1, preferences: {} }),
    "GET /api/v1/exchanges": () => jsonResponse({ exchanges: EXCHANGES }),
    "GET /api/v1/accounts": () => jsonResponse({ accounts, broker: false }),
    ...routes,
  });
}

function open() {
  return renderAt("/dashboard?page=accounts", { "/dashboard": DashboardScreen });
}

function input(label: string): HTMLInputElement {
  return within(screen.getByTestId("link-form")).getByLabelText(label) as HTMLInputElement;
}

async function fill(values: { exchange: string; key: string; secret: string; passphrase?: string; name?: string }) {
  const select = (await screen.findByTestId("link-exchange")) as HTMLSelectElement;
  await waitFor(() => expect([...select.options].map((o) => o.value)).toContain(values.exchange));
  fireEvent.change(select, { target: { value: values.exchange } });
  if (values.name) fireEvent.change(input("Name (optional)"), { target: { value: values.name } });
  fireEvent.change(input("API key"), { target: { value: values.key } });
  fireEvent.change(input("Secret key"), { target: { value: values.secret } });
  if (values.passphrase !== undefined)
    fireEvent.change(await waitFor(() => input("Passphrase")), { target: { value: values.passphrase } });
}

beforeEach(() => {
  resetSession();
  resetMemberSync();
  queryClient.clear();
  resetExchanges();
});
afterEach(() => {
  resetSession();
  queryClient.clear();
});

describe("exchange accounts: the list", () => {
  it("shows each account with its mode, key ending, status and reason; only linked keys can be unlinked", async () => {
    serve([
      account({ id: "a1", exchange: "binance", name: "main", key_last4: "9876" }),
      account({ id: "a2", exchange: "okx", mode: "broker", key_last4: "", status: "provisioning" }),
      account({ id: "a3", exchange: "bybit", status: "failed", status_reason: "sub-account limit reached" }),
    ]);
    open();
    const binance = await screen.findByTestId("account-binance");
    expect(within(binance).getByText("main")).toBeTruthy();
    expect(screen.getByTestId("account-key-binance").textContent).toBe("••••9876");
    expect(screen.getByTestId("account-mode-binance").textContent).toBe("Linked API key");
    expect(screen.getByTestId("account-status-binance").textContent).toBe("Active");
    expect(screen.getByTestId("account-mode-okx").textContent).toBe("Broker account (managed by exhub)");
    expect(screen.getByTestId("account-status-okx").textContent).toBe("Being set up");
    expect(screen.queryByTestId("unlink-okx")).toBeNull();
    expect(within(screen.getByTestId("account-okx")).getByText(/managed by exhub and cannot be unlinked/)).toBeTruthy();
    expect(screen.getByTestId("account-status-bybit").textContent).toBe("Failed");
    expect(screen.getByTestId("account-reason-bybit").textContent).toBe("sub-account limit reached");
    expect(screen.getByTestId("unlink-binance")).toBeTruthy();
    expect(screen.getByTestId("unlink-bybit")).toBeTruthy();
    // Every exchange has an account: nothing left to link.
    await waitFor(() => expect(screen.getByTestId("link-none").textContent).toMatch(/already has an account/));
  });

  it("says when there is no account and offers only exchanges without one", async () => {
    serve([]);
    open();
    expect(await screen.findByTestId("accounts-empty")).toBeTruthy();
    const select = (await screen.findByTestId("link-exchange")) as HTMLSelectElement;
    await waitFor(() => expect([...select.options].map((o) => o.value)).toEqual(["binance", "okx", "bybit"]));
    expect(screen.getByTestId("withdraw-note").textContent).toMatch(/withdraw/);
  });

  it("shows a failed read with Retry, and reads again", async () => {
    let fail = true;
    serve([], {
      "GET /api/v1/accounts": () =>
        fail ? problem(500, "internal") : jsonResponse({ accounts: [account({ id: "a1", exchange: "binance" })], broker: false }),
    });
    open();
    const box = await screen.findByTestId("accounts-error", {}, { timeout: 10_000 });
    fail = false;
    fireEvent.click(within(box).getByRole("button", { name: "Retry" }));
    expect(await screen.findByTestId("account-binance")).toBeTruthy();
  });

  it("says linking is not available when the server has no key-encryption key", async () => {
    serve([], { "GET /api/v1/accounts": () => problem(503, "accounts_unavailable") });
    open();
    const box = await screen.findByTestId("accounts-error", {}, { timeout: 10_000 });
    expect(box.textContent).toMatch(/not available on this server/);
    expect(within(box).queryByRole("button", { name: "Retry" })).toBeNull();
  });
});

describe("exchange accounts: broker mode", () => {
  // The list is read again every 5 s while broker mode has not made the member's first account or one is being set up.
  const POLL_MS = 5_000;
  const reads = (api: ReturnType<typeof serve>) =>
    api.calls.filter((c) => c.method === "GET" && c.path === "/api/v1/accounts").length;
  const wait = (ms: number) => act(() => vi.advanceTimersByTimeAsync(ms));

  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("shows a new member's broker account as it is made, without a reload, then stops reading", async () => {
    let accounts: Account[] = [];
    const api = serve([], { "GET /api/v1/accounts": () => jsonResponse({ accounts, broker: true }) });
    open();
    expect(await screen.findByTestId("accounts-empty")).toBeTruthy();
    // Not made yet: read again.
    let seen = reads(api);
    await wait(POLL_MS);
    await waitFor(() => expect(reads(api)).toBeGreaterThan(seen));
    expect(screen.getByTestId("accounts-empty")).toBeTruthy();

    // Being set up: shown, and read again.
    accounts = [account({ id: "b1", exchange: "binance", mode: "broker", key_last4: "", status: "provisioning" })];
    await wait(POLL_MS);
    await waitFor(() => expect(screen.getByTestId("account-status-binance").textContent).toBe("Being set up"));
    expect(screen.queryByTestId("accounts-empty")).toBeNull();

    // Made: active with its key's end.
    accounts = [
      account({ id: "b1", exchange: "binance", mode: "broker", key_last4: "x9Q2" }),
      account({ id: "b2", exchange: "okx", mode: "broker", key_last4: "7ee0" }),
    ];
    await wait(POLL_MS);
    await waitFor(() => expect(screen.getByTestId("account-status-binance").textContent).toBe("Active"));
    expect(screen.getByTestId("account-key-binance").textContent).toBe("••••x9Q2");
    expect(screen.getByTestId("account-status-okx").textContent).toBe("Active");
    expect(screen.queryByTestId("unlink-binance")).toBeNull();

    // Nothing left to wait for: no more reads.
    seen = reads(api);
    await wait(POLL_MS * 4);
    expect(reads(api)).toBe(seen);
  });

  it("does not read again without broker mode when the member has no account", async () => {
    const api = serve([]);
    open();
    expect(await screen.findByTestId("accounts-empty")).toBeTruthy();
    const seen = reads(api);
    await wait(POLL_MS * 4);
    expect(reads(api)).toBe(seen);
  });
});

describe("exchange accounts: linking", () => {
  it("links an OKX key with its passphrase, refreshes the list and forgets the secrets", async () => {
    let accounts: Account[] = [];
    const api = serve([], {
      "GET /api/v1/accounts": () => jsonResponse({ accounts, broker: false }),
      "POST /api/v1/accounts": (c) => {
        const b = c.body as { exchange: string; name: string; api_key: string };
        const a = account({ id: "n1", exchange: b.exchange, name: b.name, key_last4: b.api_key.slice(-4) });
        accounts = [a];
        return jsonResponse(a, 201);
      },
    });
    open();
    await fill({ exchange: "binance", key: "k", secret: "s" });
    // Binance keys have no passphrase; OKX keys do.
    expect(within(screen.getByTestId("link-form")).queryByLabelText("Passphrase")).toBeNull();
    await fill({ exchange: "okx", key: "okxKEY-abcd4321", secret: "okx-secret", passphrase: "Pass#1", name: "desk" });
    for (const l of ["API key", "Secret key", "Passphrase"]) {
      expect(input(l).type).toBe("password");
      expect(input(l).getAttribute("autocomplete")).toBe("off");
    }
    fireEvent.click(screen.getByTestId("link-submit"));
    expect(await screen.findByTestId("account-okx")).toBeTruthy();
    expect(screen.getByTestId("account-key-okx").textContent).toBe("••••4321");
    const post = api.calls.find((c) => c.method === "POST")!;
    expect(post.body).toEqual({
      exchange: "okx",
      name: "desk",
      api_key: "okxKEY-abcd4321",
      api_secret: "okx-secret",
      passphrase: "Pass#1",
    });
    expect(post.headers.get("X-CSRF-Token")).toBeTruthy();
    // OKX is taken now: the form offers the others, with empty fields.
    await waitFor(() =>
      expect([...(screen.getByTestId("link-exchange") as HTMLSelectElement).options].map((o) => o.value)).toEqual([
        "binance",
        "bybit",
      ]),
    );
    expect(input("API key").value).toBe("");
    expect(input("Secret key").value).toBe("");
    expect(document.body.innerHTML).not.toContain("okx-secret");
  });

  it("checks the fields before sending", async () => {
    const api = serve([]);
    open();
    await fill({ exchange: "okx", key: "has space", secret: "", passphrase: "" });
    fireEvent.click(screen.getByTestId("link-submit"));
    await waitFor(() => expect(input("API key").getAttribute("aria-invalid")).toBe("true"));
    expect(input("Secret key").getAttribute("aria-invalid")).toBe("true");
    expect(input("Passphrase").getAttribute("aria-invalid")).toBe("true");
    expect(api.calls.some((c) => c.method === "POST")).toBe(false);
  });

  const refusals: [string, () => Response, string, RegExp][] = [
    ["credentials_refused", () => problem(422, "credentials_refused", { detail: "API-key format invalid" }), "API key", /refused this API key.*API-key format invalid/],
    ["withdraw_permission", () => problem(422, "withdraw_permission"), "API key", /may withdraw funds/],
    ["account_exists", () => problem(409, "account_exists"), "Exchange", /already have an account/],
    ["unknown_exchange", () => problem(422, "unknown_exchange"), "Exchange", /exchange is not available/],
    [
      "invalid",
      () => problem(422, "invalid", { errors: [{ location: "body.api_secret", message: "bad" }] }),
      "Secret key",
      /not accepted/,
    ],
    ["exchange_unavailable", () => problem(503, "exchange_unavailable"), "", /cannot be reached right now/],
    ["accounts_unavailable", () => problem(503, "accounts_unavailable"), "", /not available on this server/],
  ];
  for (const [code, answer, field, text] of refusals) {
    it(`shows ${code} ${field ? `on the ${field} field` : "on the form"} and clears the secrets`, async () => {
      serve([], { "POST /api/v1/accounts": answer });
      open();
      await fill({ exchange: "binance", key: "KEY-abcd1234", secret: "top-secret" });
      fireEvent.click(screen.getByTestId("link-submit"));
      const form = screen.getByTestId("link-form");
      await waitFor(() => expect(form.textContent).toMatch(text));
      if (field) {
        const el = field === "Exchange" ? screen.getByTestId("link-exchange") : input(field);
        expect(el.getAttribute("aria-invalid")).toBe("true");
        const described = (el.getAttribute("aria-describedby") ?? "").split(" ").map((id) => document.getElementById(id)?.textContent ?? "");
        expect(described.join(" ")).toMatch(text);
      } else {
        expect(within(form).getByRole("alert").textContent).toMatch(text);
      }
      expect(input("API key").value).toBe("");
      expect(input("Secret key").value).toBe("");
    });
  }
});

describe("exchange accounts: unlinking", () => {
  it("asks for confirmation, unlinks the key and reads the list again", async () => {
    let accounts = [account({ id: "a1", exchange: "binance", key_last4: "5555" })];
    const api = serve([], {
      "GET /api/v1/accounts": () => jsonResponse({ accounts, broker: false }),
      "DELETE /api/v1/accounts/a1": () => {
        accounts = [];
        return new Response(null, { status: 204 });
      },
    });
    open();
    fireEvent.click(await screen.findByTestId("unlink-binance"));
    const dialog = await screen.findByRole("alertdialog", { name: "Unlink this API key?" });
    expect(dialog.textContent).toContain("5555");
    // Cancel keeps it.
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(api.calls.some((c) => c.method === "DELETE")).toBe(false);

    fireEvent.click(screen.getByTestId("unlink-binance"));
    const again = await screen.findByRole("alertdialog");
    fireEvent.click(within(again).getByRole("button", { name: "Unlink" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(await screen.findByTestId("accounts-empty")).toBeTruthy();
    const del = api.calls.find((c) => c.method === "DELETE")!;
    expect(del.path).toBe("/api/v1/accounts/a1");
    expect(del.headers.get("X-CSRF-Token")).toBeTruthy();
  });

  it("keeps the dialog open with an error when unlinking fails", async () => {
    serve([account({ id: "a1", exchange: "binance" })], {
      "DELETE /api/v1/accounts/a1": () => problem(500, "internal"),
    });
    open();
    fireEvent.click(await screen.findByTestId("unlink-binance"));
    const dialog = await screen.findByRole("alertdialog");
    fireEvent.click(within(dialog).getByRole("button", { name: "Unlink" }));
    expect((await within(dialog).findByRole("alert")).textContent).toMatch(/could not be unlinked/);
    expect(screen.getByTestId("account-binance")).toBeTruthy();
  });
});
