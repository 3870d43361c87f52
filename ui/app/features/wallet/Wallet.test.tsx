import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { queryClient } from "~/api/queries";
import { SUBPAGE_KEYS } from "~/components/Nav";
import { renderAt } from "~/features/auth/testing/render";
import { resetMemberSync } from "~/features/dashboard/sync";
import { fakeApi, jsonResponse, member, type ApiCall } from "~/features/dashboard/testing/fake-api";
import { resetExchanges } from "~/lib/exchanges";
import { resetSession } from "~/lib/session";
import { exchange } from "~/test/fixtures";
import type { Asset, Overview } from "./api";
import { HIDE_SMALL_KEY } from "./Overview";
import { WalletScreen } from "./Wallet";

const EXCHANGES = [exchange({ key: 1, slug: "binance", name: "Binance" }), exchange({ key: 2, slug: "okx", name: "OKX" })];

const OVERVIEW: Overview = {
  time: 1767225600000,
  total_usdt: "70100.5",
  exchanges: [
    {
      exchange: "binance",
      status: "ok",
      total_usdt: "70100.5",
      unpriced: [],
      wallets: [
        {
          wallet: "funding",
          total_usdt: "5000.5",
          coins: [
            { coin: "USDT", available: "5000", frozen: "0", total: "5000", usdt_price: "1", usdt_value: "5000" },
            { coin: "DOGE", available: "2", frozen: "0", total: "2", usdt_price: "0.25", usdt_value: "0.5" },
          ],
        },
        {
          wallet: "trading",
          total_usdt: "65100",
          coins: [{ coin: "BTC", available: "0.5", frozen: "0.5", total: "1", usdt_price: "65100", usdt_value: "65100" }],
        },
      ],
    },
    { exchange: "okx", status: "error", error: { code: "exchange_unavailable", detail: "Try again." }, wallets: [], total_usdt: "0", unpriced: [] },
  ],
};

const ASSETS: Asset[] = [
  {
    coin: "USDT",
    name: "Tether",
    precision: 8,
    networks: [
      { network: "TRC20", name: "Tron (TRC20)", deposit_enabled: true, withdraw_enabled: true, withdraw_fee: "1", withdraw_min: "10", withdraw_max: "1000000", memo_required: false, confirmations: 20, withdraw_step: "0.00000001", precision: 8 },
    ],
  },
  {
    coin: "XRP",
    name: "Ripple",
    precision: 6,
    networks: [
      { network: "XRP", name: "XRP Ledger", deposit_enabled: true, withdraw_enabled: true, withdraw_fee: "0.25", withdraw_min: "20", withdraw_max: "", memo_required: true, confirmations: 1, withdraw_step: "", precision: 6 },
    ],
  },
];

function movement(over: Record<string, unknown>) {
  return {
    id: "m1",
    kind: "transfer",
    exchange: "binance",
    status: "completed",
    state: "completed",
    direction: "internal",
    asset: "USDT",
    amount: "12.5",
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    ...over,
  };
}

function api(extra: Record<string, (c: ApiCall) => Response | Promise<Response>> = {}) {
  return fakeApi({
    "GET /api/v1/me": () => jsonResponse(member),
    "GET /api/v1/me/preferences": () => jsonResponse({ version: 0, preferences: {} }),
    "GET /api/v1/exchanges": () => jsonResponse({ exchanges: EXCHANGES }),
    "GET /api/v1/wallet/overview": () => jsonResponse(OVERVIEW),
    "GET /api/v1/wallet/deposit-exchange": () => jsonResponse({ exchange: "binance" }),
    "GET /api/v1/wallet/assets": () => jsonResponse({ exchange: "binance", assets: ASSETS }),
    "GET /api/v1/wallet/coin-history": (c) =>
      jsonResponse({ kind: c.query.get("kind"), coins: c.query.get("kind") === "DEPOSIT" ? ["XRP"] : [] }),
    "POST /api/v1/wallet/coin-history": (c) => jsonResponse({ kind: "DEPOSIT", coins: [(c.body as { coin: string }).coin] }),
    "GET /api/v1/wallet/deposit-address": (c) =>
      jsonResponse({
        exchange: "binance",
        coin: c.query.get("coin"),
        network: c.query.get("network"),
        address: `addr-${c.query.get("coin")}`,
        memo: c.query.get("coin") === "XRP" ? "12345" : undefined,
      }),
    "GET /api/v1/wallet/deposits": () =>
      jsonResponse({
        exchange: "binance",
        items: [{ id: "d1", coin: "USDT", network: "TRC20", amount: "100", address: "a", status: "success", time: 1767225600000 }],
      }),
    "GET /api/v1/wallet/transfers": () => jsonResponse({ exchange: "binance", items: [] }),
    "GET /api/v1/wallet/withdrawals": () => jsonResponse({ exchange: "binance", items: [] }),
    "GET /api/v1/wallet/settings": () =>
      jsonResponse({ faucet: true, faucet_asset: "USDT", faucet_amount: "10000", fee_free: { exchange: "binance", asset: "USDT", min: "20", max: "20000" } }),
    "GET /api/v1/wallet/movements": () => jsonResponse({ movements: [] }),
    ...extra,
  });
}


beforeEach(() => {
  resetSession();
  resetMemberSync();
  resetExchanges();
  queryClient.clear();
  localStorage.clear();
});
afterEach(() => {
  resetSession();
  vi.restoreAllMocks();
});

describe("wallet", () => {
  it("opens the sub-page named by ?page= and remembers it", async () => {
    api();
    renderAt("/wallet?page=transfer", { "/wallet": WalletScreen });
    expect(await screen.findByTestId("wallet-transfer")).toBeTruthy();
    expect(screen.getByTestId("wallet-tab-transfer").getAttribute("aria-current")).toBe("page");
    await waitFor(() => expect(localStorage.getItem(SUBPAGE_KEYS.wallet)).toBe("transfer"));
  });

  it("takes ?tab= too (the trade screen's links) and remembers the sub-page for the next visit", async () => {
    api();
    const first = renderAt("/wallet?tab=deposit", { "/wallet": WalletScreen });
    expect(await screen.findByTestId("wallet-deposit")).toBeTruthy();
    await waitFor(() => expect(localStorage.getItem(SUBPAGE_KEYS.wallet)).toBe("deposit"));
    first.unmount();
    renderAt("/wallet", { "/wallet": WalletScreen });
    expect(await screen.findByTestId("wallet-deposit")).toBeTruthy();
  });

  it("shows balances per exchange and wallet, the totals, an exchange's error, and hides small balances", async () => {
    api();
    renderAt("/wallet?page=overview", { "/wallet": WalletScreen });
    expect((await screen.findByTestId("overview-total")).textContent).toBe("≈ 70,100.50 USDT");
    const funding = await screen.findByTestId("overview-binance-funding");
    expect(within(funding).getByText("DOGE")).toBeTruthy();
    expect(within(screen.getByTestId("overview-binance-trading")).getByText("≈ 65,100.00")).toBeTruthy();
    expect(screen.getByTestId("overview-binance-total").textContent).toBe("≈ 70,100.50 USDT");
    expect(within(screen.getByTestId("overview-okx")).getByRole("alert").textContent).toContain("could not be read");
    fireEvent.click(screen.getByTestId("hide-small"));
    await waitFor(() => expect(within(funding).queryByText("DOGE")).toBeNull());
    expect(within(funding).getByText("USDT")).toBeTruthy();
    expect(localStorage.getItem(HIDE_SMALL_KEY)).toBe("1");
  });

  it("shows the deposit address with its memo, a QR code and copy buttons, recent coin first", async () => {
    api();
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    renderAt("/wallet?page=deposit", { "/wallet": WalletScreen });
    // XRP is the member's last deposited coin: it comes first and is chosen.
    expect((await screen.findByTestId("deposit-address")).textContent).toBe("addr-XRP");
    expect(screen.getByTestId("deposit-memo").textContent).toBe("12345");
    expect(screen.getByTestId("deposit-address-card").querySelector("svg")).toBeTruthy();
    expect(screen.getByRole("note").textContent).toContain("memo");
    fireEvent.click(screen.getByTestId("copy-address"));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith("addr-XRP"));
    expect(await screen.findByText("Copy Successful")).toBeTruthy();
    const history = screen.getByTestId("deposit-history");
    expect(await within(history).findByText("100")).toBeTruthy();
    // Another coin: its address, and it goes to the front of the coin history.
    fireEvent.change(screen.getByTestId("deposit-coin"), { target: { value: "USDT" } });
    await waitFor(() => expect(screen.getByTestId("deposit-address").textContent).toBe("addr-USDT"));
    expect(screen.queryByTestId("deposit-memo")).toBeNull();
  });

  it("says Copy failed when neither clipboard works", async () => {
    api();
    Object.defineProperty(navigator, "clipboard", { value: { writeText: () => Promise.reject(new Error("denied")) }, configurable: true });
    document.execCommand = vi.fn(() => false);
    renderAt("/wallet?page=deposit", { "/wallet": WalletScreen });
    fireEvent.click(await screen.findByTestId("copy-address"));
    expect(await screen.findByText("Copy failed")).toBeTruthy();
  });

  it("says a transfer the exchange has not confirmed is pending, never failed", async () => {
    const { calls } = api({
      "POST /api/v1/wallet/transfers": () => jsonResponse(movement({ kind: "transfer", status: "pending", state: "unknown" }), 202),
    });
    renderAt("/wallet?page=transfer", { "/wallet": WalletScreen });
    await waitFor(() => expect(screen.getByTestId("transfer-available").textContent).toContain("5,000"));
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "12.5" } });
    fireEvent.click(screen.getByTestId("transfer-submit"));
    expect((await screen.findByTestId("movement-pending")).textContent).toContain("Pending");
    expect(within(screen.getByTestId("wallet-transfer")).queryByText(/failed/i)).toBeNull();
    const post = calls.find((c) => c.method === "POST" && c.path === "/api/v1/wallet/transfers")!;
    expect(post.body).toEqual({ exchange: "binance", asset: "USDT", amount: "12.5", from: "FUNDING", to: "TRADING" });
    expect(post.headers.get("Idempotency-Key")).toBeTruthy();
  });

  it("counts a withdrawal's available amount in the wallet the exchange pays it from", async () => {
    api({ "GET /api/v1/wallet/assets": () => jsonResponse({ exchange: "binance", assets: ASSETS, withdraw_wallet: "trading" }) });
    renderAt("/wallet?page=withdraw", { "/wallet": WalletScreen });
    // The trading wallet holds no USDT (the funding wallet's 5,000 do not count).
    await waitFor(() => expect(screen.getByTestId("withdraw-available").textContent).toMatch(/\b0 USDT/));
  });

  it("refuses a withdrawal below the minimum, over the balance, and with too many decimals before sending", async () => {
    const { calls } = api();
    renderAt("/wallet?page=withdraw", { "/wallet": WalletScreen });
    await waitFor(() => expect(screen.getByTestId("withdraw-available").textContent).toContain("5,000"));
    fireEvent.change(screen.getByTestId("withdraw-coin"), { target: { value: "USDT" } });
    fireEvent.change(screen.getByTestId("withdraw-address"), { target: { value: "TXaddress" } });
    const amount = screen.getByTestId("amount");
    fireEvent.change(amount, { target: { value: "9.5" } });
    fireEvent.click(screen.getByTestId("withdraw-submit"));
    expect(await screen.findByText("Cannot be less than the minimum amount")).toBeTruthy();
    fireEvent.change(amount, { target: { value: "5000" } });
    expect(await screen.findByText("Your balance insufficient to cover withdrawal amount and fees.")).toBeTruthy();
    fireEvent.change(amount, { target: { value: "6000" } });
    expect(await screen.findByText("The amount exceeds the balance")).toBeTruthy();
    fireEvent.change(amount, { target: { value: "10.123456789" } });
    expect(await screen.findByText("At most 8 decimal places.")).toBeTruthy();
    expect(calls.some((c) => c.method === "POST" && c.path === "/api/v1/wallet/withdrawals")).toBe(false);
  });

  it("checks a withdrawal's and an exchange transfer's decimals against the network's precision (its withdrawal step)", async () => {
    const coarse: Asset[] = [
      {
        coin: "USDT",
        name: "Tether",
        precision: 8,
        networks: [
          { network: "TRC20", name: "Tron (TRC20)", deposit_enabled: true, withdraw_enabled: true, withdraw_fee: "1", withdraw_min: "10", withdraw_max: "1000000", memo_required: false, confirmations: 20, withdraw_step: "0.01", precision: 2 },
        ],
      },
    ];
    const { calls } = api({ "GET /api/v1/wallet/assets": () => jsonResponse({ exchange: "binance", assets: coarse }) });
    const first = renderAt("/wallet?page=withdraw", { "/wallet": WalletScreen });
    await waitFor(() => expect(screen.getByTestId("withdraw-available").textContent).toContain("5,000"));
    fireEvent.change(screen.getByTestId("withdraw-address"), { target: { value: "TXaddress" } });
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "10.125" } });
    fireEvent.click(screen.getByTestId("withdraw-submit"));
    expect(await screen.findByText("At most 2 decimal places.")).toBeTruthy();
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "10.12" } });
    await waitFor(() => expect(screen.queryByText("At most 2 decimal places.")).toBeNull());
    first.unmount();

    renderAt("/wallet?page=exchange", { "/wallet": WalletScreen });
    await waitFor(() => expect(screen.getByTestId("exchange-submit")).toBeTruthy());
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "25.125" } });
    fireEvent.click(screen.getByTestId("exchange-submit"));
    expect(await screen.findByText("At most 2 decimal places.")).toBeTruthy();
    expect(calls.some((c) => c.method === "POST" && /withdrawals|exchange-transfers/.test(c.path))).toBe(false);
  });

  it("asks for demo funds in demo mode and reads the deposit history again", async () => {
    const { calls } = api({
      "POST /api/v1/wallet/faucet": () => jsonResponse(movement({ kind: "faucet", direction: "in", amount: "10000" }), 201),
    });
    renderAt("/wallet?page=deposit", { "/wallet": WalletScreen });
    fireEvent.click(await screen.findByTestId("faucet-button"));
    expect((await screen.findByTestId("movement-done")).textContent).toBe("Demo funds credited.");
    const post = calls.find((c) => c.method === "POST" && c.path === "/api/v1/wallet/faucet")!;
    expect(post.body).toEqual({ exchange: "binance" });
    expect(post.headers.get("Idempotency-Key")).toBeTruthy();
    await waitFor(() => expect(calls.filter((c) => c.path === "/api/v1/wallet/deposits").length).toBeGreaterThan(1));
  });

  it("hides the faucet outside demo mode", async () => {
    api({ "GET /api/v1/wallet/settings": () => jsonResponse({ faucet: false }) });
    renderAt("/wallet?page=deposit", { "/wallet": WalletScreen });
    await screen.findByTestId("deposit-address");
    expect(screen.queryByTestId("faucet")).toBeNull();
  });

  it("puts the server's refusal on the field it names", async () => {
    api({
      "POST /api/v1/wallet/withdrawals": () =>
        jsonResponse({ status: 422, title: "Unprocessable Entity", code: "invalid_address", field: "address", detail: "The address is not valid for this network." }, 422),
    });
    renderAt("/wallet?page=withdraw", { "/wallet": WalletScreen });
    await waitFor(() => expect(screen.getByTestId("withdraw-coin")).toBeTruthy());
    fireEvent.change(screen.getByTestId("withdraw-coin"), { target: { value: "USDT" } });
    await waitFor(() => expect(screen.getByTestId("withdraw-available").textContent).toContain("5,000"));
    fireEvent.change(screen.getByTestId("withdraw-address"), { target: { value: "bad" } });
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "15" } });
    fireEvent.click(screen.getByTestId("withdraw-submit"));
    const input = screen.getByTestId("withdraw-address");
    await waitFor(() => expect(input.getAttribute("aria-invalid")).toBe("true"));
    expect(screen.getByText("The address is not valid for this network.")).toBeTruthy();
  });

  it("applies the fee-free range to the fee-free exchange", async () => {
    api({ "GET /api/v1/wallet/deposit-exchange": () => jsonResponse({ exchange: "okx" }) });
    renderAt("/wallet?page=exchange", { "/wallet": WalletScreen });
    // From OKX to Binance (the fee-free exchange) in USDT: no fee, 20 to 20,000.
    await waitFor(() => expect(screen.getByTestId("exchange-fee").textContent).toBe("Free"));
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "19" } });
    fireEvent.click(screen.getByTestId("exchange-submit"));
    expect(await screen.findByText("Cannot be less than the minimum amount")).toBeTruthy();
  });

  it("converts with a quote: its price and expiry, then the trade with the quote's figures", async () => {
    const expires = new Date(Date.now() + 60_000).toISOString();
    const quote = { exchange: "binance", quote_id: "q1", from: "USDT", to: "XRP", from_amount: "100", to_amount: "40", price: "0.4", expires_at: expires };
    const { calls } = api({
      "POST /api/v1/wallet/convert/quotes": () => jsonResponse(quote),
      "POST /api/v1/wallet/converts": () => jsonResponse(movement({ kind: "convert", to_asset: "XRP", to_amount: "40" }), 201),
      "GET /api/v1/wallet/converts": () => jsonResponse({ exchange: "binance", items: [] }),
    });
    renderAt("/wallet?page=convert", { "/wallet": WalletScreen });
    await waitFor(() => expect(screen.getByTestId("convert-from")).toHaveProperty("value", "USDT"));
    fireEvent.change(screen.getByTestId("convert-to"), { target: { value: "XRP" } });
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "100" } });
    fireEvent.click(screen.getByTestId("convert-quote"));
    expect((await screen.findByTestId("convert-receive")).textContent).toBe("40 XRP");
    expect(screen.getByTestId("convert-expiry").textContent).toMatch(/^\d+ s$/);
    const asked = calls.find((c) => c.path === "/api/v1/wallet/convert/quotes")!;
    expect(asked.body).toEqual({ exchange: "binance", from: "USDT", to: "XRP", from_amount: "100" });
    fireEvent.click(screen.getByTestId("convert-confirm"));
    expect((await screen.findByTestId("movement-done")).textContent).toBe("Conversion successful.");
    const traded = calls.find((c) => c.method === "POST" && c.path === "/api/v1/wallet/converts")!;
    expect(traded.body).toEqual({ exchange: "binance", quote_id: "q1", from: "USDT", to: "XRP", from_amount: "100", to_amount: "40" });
    expect(traded.headers.get("Idempotency-Key")).toBeTruthy();
  });

  it("asks before sending a gift and shows both sides in its history", async () => {
    const { calls } = api({
      "POST /api/v1/wallet/gifts": () => jsonResponse(movement({ kind: "gift", direction: "out", recipient: "b-id", status: "completed" }), 201),
      "GET /api/v1/wallet/movements": () =>
        jsonResponse({
          movements: [
            movement({ id: "g2", kind: "gift", direction: "in", sender: "c-id", amount: "3" }),
            movement({ id: "g1", kind: "gift", direction: "out", recipient: "b-id", amount: "2" }),
          ],
        }),
    });
    renderAt("/wallet?page=gift", { "/wallet": WalletScreen });
    const history = await screen.findByTestId("gift-history-table");
    expect(await within(history).findByText("c-id")).toBeTruthy();
    expect(within(history).getByText("Received")).toBeTruthy();
    expect(within(history).getByText("Sent")).toBeTruthy();
    await waitFor(() => expect(screen.getByTestId("gift-coin")).toHaveProperty("value", "USDT"));
    fireEvent.change(screen.getByTestId("gift-recipient"), { target: { value: "bob@example.com" } });
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "2" } });
    fireEvent.click(screen.getByTestId("gift-submit"));
    expect((await screen.findByTestId("gift-confirm-text")).textContent).toContain("bob@example.com");
    expect(calls.some((c) => c.path === "/api/v1/wallet/gifts")).toBe(false);
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect((await screen.findByTestId("movement-done")).textContent).toBe("Gift sent.");
    const sent = calls.find((c) => c.path === "/api/v1/wallet/gifts")!;
    expect(sent.body).toEqual({ exchange: "binance", asset: "USDT", amount: "2", recipient: "bob@example.com" });
  });
});

describe("second factor step-up", () => {
  const stale = () =>
    jsonResponse(
      {
        status: 403,
        title: "Forbidden",
        code: "second_factor_stale",
        step_up: "/otpauth?refresh=true",
        detail: "Enter your authenticator app code again: money leaves your account only within 5 minutes of the code.",
      },
      403,
    );
  const member2fa = { ...member, aal: "aal2", two_factor: { totp: true, lookup_secret: false } };

  beforeEach(() => sessionStorage.clear());

  it("keeps a refused withdrawal's entries, asks for a code again, then restores them to confirm again", async () => {
    let refuse = true;
    const { calls } = api({
      "GET /api/v1/me": () => jsonResponse(member2fa),
      "POST /api/v1/wallet/withdrawals": (c) =>
        refuse
          ? stale()
          : jsonResponse(movement({ id: "w1", kind: "withdraw", status: "processing", state: "acknowledged", direction: "out", ...(c.body as object) }), 201),
    });
    const first = renderAt("/wallet?page=withdraw", { "/wallet": WalletScreen });
    await waitFor(() => expect(screen.getByTestId("withdraw-available").textContent).toContain("5,000"));
    fireEvent.change(screen.getByTestId("withdraw-coin"), { target: { value: "USDT" } });
    fireEvent.change(screen.getByTestId("withdraw-address"), { target: { value: "TXaddress" } });
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "15" } });
    fireEvent.click(screen.getByTestId("withdraw-submit"));

    // Off to the second factor, with the way back.
    await waitFor(() => expect(screen.getByTestId("where").textContent).toBe(`/otpauth?refresh=true&return_to=${encodeURIComponent("/wallet?page=withdraw")}`));
    const kept = sessionStorage.getItem("exhub.wallet.step-up.withdraw") ?? "";
    expect(JSON.parse(kept)).toMatchObject({ exchange: "binance", coin: "USDT", network: "TRC20", values: { amount: "15", address: "TXaddress", memo: "" } });
    expect(kept).not.toMatch(/code/i);
    first.unmount();

    // Back from /otpauth: the form as the member left it, and a notice to confirm again.
    refuse = false;
    renderAt("/wallet?page=withdraw", { "/wallet": WalletScreen });
    expect(await screen.findByTestId("step-up-restored")).toBeTruthy();
    expect((screen.getByTestId("withdraw-address") as HTMLInputElement).value).toBe("TXaddress");
    expect((screen.getByTestId("amount") as HTMLInputElement).value).toBe("15");
    expect(sessionStorage.getItem("exhub.wallet.step-up.withdraw")).toBeNull();
    await waitFor(() => expect((screen.getByTestId("withdraw-coin") as HTMLSelectElement).value).toBe("USDT"));
    await waitFor(() => expect(screen.getByTestId("withdraw-available").textContent).toContain("5,000"));
    fireEvent.click(screen.getByTestId("withdraw-submit"));
    expect(await screen.findByTestId("movement-processing")).toBeTruthy();
    expect(screen.queryByTestId("step-up-restored")).toBeNull();
    const posts = calls.filter((c) => c.method === "POST" && c.path === "/api/v1/wallet/withdrawals");
    expect(posts).toHaveLength(2);
    expect(posts[1]!.body).toMatchObject({ exchange: "binance", asset: "USDT", network: "TRC20", amount: "15", address: "TXaddress" });
    // A new Idempotency-Key: the refused request moved nothing.
    expect(posts[1]!.headers.get("Idempotency-Key")).not.toBe(posts[0]!.headers.get("Idempotency-Key"));
  });

  it("does the same for a gift refused in its confirmation", async () => {
    api({ "GET /api/v1/me": () => jsonResponse(member2fa), "POST /api/v1/wallet/gifts": () => stale() });
    const first = renderAt("/wallet?page=gift", { "/wallet": WalletScreen });
    await waitFor(() => expect((screen.getByTestId("gift-coin") as HTMLSelectElement).value).toBe("USDT"));
    fireEvent.change(screen.getByTestId("gift-recipient"), { target: { value: "bob@example.com" } });
    fireEvent.change(screen.getByTestId("amount"), { target: { value: "3" } });
    fireEvent.click(screen.getByTestId("gift-submit"));
    fireEvent.click(await screen.findByRole("button", { name: "Send" }));
    await waitFor(() => expect(screen.getByTestId("where").textContent).toBe(`/otpauth?refresh=true&return_to=${encodeURIComponent("/wallet?page=gift")}`));
    first.unmount();

    renderAt("/wallet?page=gift", { "/wallet": WalletScreen });
    expect(await screen.findByTestId("step-up-restored")).toBeTruthy();
    expect((screen.getByTestId("gift-recipient") as HTMLInputElement).value).toBe("bob@example.com");
    expect((screen.getByTestId("amount") as HTMLInputElement).value).toBe("3");
  });

  it("drops a draft that is too old or not its own shape", async () => {
    sessionStorage.setItem(
      "exhub.wallet.step-up.withdraw",
      JSON.stringify({ exchange: "binance", coin: "USDT", values: { address: "old" }, at: Date.now() - 31 * 60_000 }),
    );
    api();
    renderAt("/wallet?page=withdraw", { "/wallet": WalletScreen });
    await waitFor(() => expect(screen.getByTestId("withdraw-available").textContent).toContain("5,000"));
    expect((screen.getByTestId("withdraw-address") as HTMLInputElement).value).toBe("");
    expect(screen.queryByTestId("step-up-restored")).toBeNull();
    expect(sessionStorage.getItem("exhub.wallet.step-up.withdraw")).toBeNull();
  });
});
