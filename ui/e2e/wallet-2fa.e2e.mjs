// End-to-end check of the fresh second factor for money leaving the account, in Chromium through the edge of a running
// demo stack started with a short window (scripts/e2e.sh sets EXHUB_WALLET_SECOND_FACTOR_WINDOW=20s unless given):
// a new member gets demo funds, enables the authenticator on the Security page, and once the window has passed asks
// for a withdrawal at 390 px: the BFF refuses it (second_factor_stale), the form keeps the entries and sends the member
// to /otpauth?refresh=true, a current code brings them back to the Withdraw page with the entries restored and a
// notice to confirm again, and the confirmed withdrawal gets past the second factor (to the 24-hour lockout that
// enabling the authenticator started).
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import { freshTotp } from "./inbox.mjs";
import { getJSON, register, until, withBrowser } from "./session.mjs";

const stamp = Date.now().toString(36);
const member = { email: `e2e-wallet-2fa-${stamp}@example.com`, password: "Wm4%tRq7" };
const ACCOUNT_WAIT_MS = 120_000;

// The stack's second_factor_window (Go duration: "20s", "1m"); the test waits it out.
function windowMs(s = process.env.EXHUB_WALLET_SECOND_FACTOR_WINDOW ?? "20s") {
  const m = /^(\d+)(ms|s|m)$/.exec(s.trim());
  assert.ok(m, `EXHUB_WALLET_SECOND_FACTOR_WINDOW ${s}: use ms, s or m`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2]];
}

// A decimal string as a number of 1e-8 units (exact for this test's amounts).
function units(s) {
  const [i, f = ""] = String(s).split(".");
  return BigInt(i) * 100000000n + BigInt((f + "00000000").slice(0, 8));
}

// The member's USDT on an exchange, per wallet, from the overview.
async function usdt(page, exchange) {
  const r = await getJSON(page, "/api/v1/wallet/overview");
  const ex = r.body?.exchanges?.find((e) => e.exchange === exchange);
  const of = (w) => units(ex?.wallets.find((x) => x.wallet === w)?.coins.find((c) => c.coin === "USDT")?.available ?? "0");
  return { funding: of("funding"), trading: of("trading") };
}

async function post(page, url, body) {
  return page.evaluate(
    async ([u, b]) => {
      const token = document.cookie
        .split("; ")
        .find((c) => c.startsWith("exhub_csrf="))
        ?.slice("exhub_csrf=".length);
      const headers = { Accept: "application/json", "Content-Type": "application/json", "Idempotency-Key": crypto.randomUUID() };
      if (token) headers["X-CSRF-Token"] = decodeURIComponent(token);
      const r = await fetch(u, { method: "POST", credentials: "same-origin", headers, body: JSON.stringify(b) });
      return { status: r.status, body: await r.json().catch(() => null) };
    },
    [url, body],
  );
}

test("a withdrawal past the second factor's window asks for a code again, keeps the form and goes on after", async () => {
  const span = windowMs();
  assert.ok(span <= 60_000, "run the stack with a short EXHUB_WALLET_SECOND_FACTOR_WINDOW (the test waits it out)");
  await withBrowser("wallet-2fa", { theme: "light", width: 390, height: 844 }, async (page, _context, shot) => {
    await register(page, member);
    const accounts = await until(
      page,
      async () => {
        const r = await getJSON(page, "/api/v1/accounts");
        return r.status === 200 && r.body.accounts.length > 0 && r.body.accounts.every((a) => a.status === "active") && r.body.accounts;
      },
      "the broker accounts",
      ACCOUNT_WAIT_MS,
    );
    const exchange = accounts[0].exchange;
    const grant = await post(page, "/api/v1/wallet/faucet", { exchange });
    assert.ok(grant.status === 201 || grant.status === 202, JSON.stringify(grant.body));
    await until(page, async () => {
      const b = await usdt(page, exchange);
      return b.funding + b.trading > 0n;
    }, "the demo funds");
    // Withdrawals are paid from the funding wallet: move some there when the grant went to trading.
    if ((await usdt(page, exchange)).funding < units("100")) {
      const moved = await post(page, "/api/v1/wallet/transfers", { exchange, asset: "USDT", amount: "100", from: "TRADING", to: "FUNDING" });
      assert.ok(moved.status === 201 || moved.status === 202, JSON.stringify(moved.body));
      await until(page, async () => (await usdt(page, exchange)).funding >= units("100"), "100 USDT in the funding wallet");
    }
    const assets = (await getJSON(page, `/api/v1/wallet/assets?exchange=${exchange}`)).body.assets;
    const net = assets.find((a) => a.coin === "USDT").networks.find((n) => n.withdraw_enabled);
    assert.ok(net && units(net.withdraw_min) + units(net.withdraw_fee) <= units("100"), "USDT can be withdrawn from 100");

    // The authenticator, as the Security page sets it up (the session passes the second factor doing so).
    await page.goto("/dashboard/security");
    await page.getByTestId("totp-setup").waitFor();
    await page.getByTestId("totp-next").click();
    await page.getByTestId("totp-qr").waitFor();
    const secret = (await page.getByTestId("totp-secret").textContent()).trim();
    await page.getByTestId("totp-next").click();
    await page.getByTestId("lookup-generate").click();
    await page.getByTestId("lookup-secrets").waitFor();
    await page.getByTestId("lookup-saved").check();
    await page.getByTestId("totp-next").click();
    await page.getByTestId("totp-next").click();
    const first = await freshTotp(secret, -1);
    await page.getByTestId("totp-code").fill(first.code);
    await page.getByTestId("totp-enable").click();
    await page.getByTestId("totp-enabled").waitFor();
    const enabledAt = Date.now();
    const me = await getJSON(page, "/api/v1/me");
    assert.equal(me.body.two_factor.totp, true);

    // Once the window has passed, the withdrawal is refused for an old code: off to enter one again.
    await until(page, async () => Date.now() > enabledAt + span + 2_000, "the second factor's window to pass", span + 30_000);
    await page.goto("/wallet?page=withdraw");
    await page.getByTestId("withdraw-form").waitFor();
    await page.getByTestId("withdraw-exchange").selectOption(exchange);
    await page.getByTestId("withdraw-coin").selectOption("USDT");
    await page.getByTestId("withdraw-network").selectOption(net.network);
    await until(page, async () => /[1-9]/.test(await page.getByTestId("withdraw-available").innerText()), "the funding balance");
    await page.getByTestId("withdraw-address").fill("TXe2eWallet2faAddress0000000000001");
    await page.getByTestId("amount").fill(net.withdraw_min);
    await page.getByTestId("withdraw-submit").click();
    await page.waitForURL((u) => u.pathname === "/otpauth" && u.searchParams.get("refresh") === "true" && u.searchParams.get("return_to") === "/wallet?page=withdraw");
    await shot("step-up");
    const next = await freshTotp(secret, first.step);
    await page.getByLabel("Authentication code").fill(next.code);
    await page.getByRole("button", { name: "Verify" }).click();

    // Back on the form as it was, asked to confirm again.
    await page.waitForURL((u) => u.pathname === "/wallet" && u.searchParams.get("page") === "withdraw");
    await page.getByTestId("step-up-restored").waitFor();
    assert.equal(await page.getByTestId("withdraw-address").inputValue(), "TXe2eWallet2faAddress0000000000001");
    assert.equal(await page.getByTestId("amount").inputValue(), net.withdraw_min);
    assert.equal(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith("exhub.wallet.step-up.")).length), 0);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the restored form overflows by ${overflow}px`);
    await shot("restored");

    // Confirmed with the fresh code: past the second factor. Enabling the authenticator was a security change, so
    // the next rule answers: withdrawals are locked for 24 hours, said in the form.
    const answer = page.waitForResponse((r) => r.url().endsWith("/api/v1/wallet/withdrawals") && r.request().method() === "POST");
    await page.getByTestId("withdraw-submit").click();
    const r = await answer;
    const body = await r.json().catch(() => ({}));
    assert.equal(body.code, "withdraw_locked", JSON.stringify(body));
    await page.getByText("Withdrawals are locked for 24 hours after a security change").waitFor();
    assert.equal(new URL(page.url()).pathname, "/wallet");
  });
});
