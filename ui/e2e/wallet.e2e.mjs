// End-to-end check of /wallet in Chromium through the edge of a running demo stack: a new member registers (code
// from the demo inbox), waits for the broker accounts demo mode makes, and opens the wallet with the top bar's
// Deposit button: the deposit address with its copy button ("Copy Successful") and QR code; demo funds from the
// faucet show in the balances; a transfer between the funding and trading wallets and back, each shown in the
// balances; a withdrawal below the network's minimum is refused with the spec's message (in the form, and by the
// API); every sub-page in English (dark, desktop) and in Japanese (light, 390 px), with the tabs reachable by
// keyboard and nothing wider than the phone.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import { getJSON, register, signIn, until, withBrowser } from "./session.mjs";

const stamp = Date.now().toString(36);
const member = { email: `e2e-wallet-${stamp}@example.com`, password: "Wm4%tRq7" };
// Broker mode makes the sub-accounts and their keys in the background after sign-up.
const ACCOUNT_WAIT_MS = 120_000;
const SUB_PAGES = ["overview", "deposit", "withdraw", "convert", "transfer", "exchange", "gift"];

const texts = {
  en: {
    wallet: "Wallet",
    tabs: ["Wallet Overview", "Deposit", "Withdraw", "Convert", "Transfer", "Exchange", "Gift"],
    copied: "Copy Successful",
    minimum: "Cannot be less than the minimum amount",
  },
  ja: {
    wallet: "ウォレット",
    tabs: ["ウォレット概要", "入金", "出金", "コンバート", "振替", "取引所", "ギフト"],
    copied: "コピーしました",
    minimum: "最小数量を下回ることはできません",
  },
};

// The sum of a coin over both wallets of an exchange, from the overview (a decimal string compared as a number of
// 1e-8 units: exact for the amounts of this test).
function units(s) {
  const [i, f = ""] = String(s).split(".");
  return BigInt(i) * 100000000n + BigInt((f + "00000000").slice(0, 8));
}

async function balances(page, exchange, coin) {
  const r = await getJSON(page, "/api/v1/wallet/overview");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const ex = r.body.exchanges.find((e) => e.exchange === exchange);
  assert.ok(ex, `${exchange} in the overview`);
  const of = (w) => ex.wallets.find((x) => x.wallet === w)?.coins.find((c) => c.coin === coin)?.total ?? "0";
  return { status: ex.status, funding: units(of("funding")), trading: units(of("trading")) };
}

// POST with an Idempotency-Key from the page, as the app sends a movement: { status, body }.
async function postMovement(page, url, body) {
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

// Opens every sub-page by its tab (the first by keyboard), checks its content and that nothing is wider than the
// window.
async function visitAll(page, tx, shot, label) {
  for (const [i, p] of SUB_PAGES.entries()) {
    const tab = page.getByTestId(`wallet-tab-${p}`);
    assert.equal((await tab.innerText()).trim(), tx.tabs[i]);
    if (i === 1) {
      await tab.focus();
      await page.keyboard.press("Enter");
    } else {
      await tab.click();
    }
    await page.getByTestId(`wallet-${p}`).waitFor();
    assert.equal(await tab.getAttribute("aria-current"), "page");
    // The page's first content: the overview's total, a form or the deposit address.
    if (p === "overview") await page.getByTestId("overview-total").filter({ hasText: "USDT" }).waitFor();
    else if (p === "deposit") await page.getByTestId("deposit-address").waitFor();
    else await page.getByTestId(`${p}-form`).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${p} overflows by ${overflow}px (${label})`);
    await shot(`${label}-${p}`);
  }
}

test("the wallet: deposit address and copy, demo funds, transfers both ways, a withdrawal under the minimum, every sub-page in English and Japanese, both themes, 390px", async () => {
  let exchange = "";
  await withBrowser("wallet-desktop", { theme: "dark", width: 1280, height: 900 }, async (page, context, shot) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await register(page, member);
    await until(
      page,
      async () => {
        const r = await getJSON(page, "/api/v1/accounts");
        return r.status === 200 && r.body.accounts.length > 0 && r.body.accounts.every((a) => a.status === "active");
      },
      "the broker accounts",
      ACCOUNT_WAIT_MS,
    );

    // The top bar's Deposit button opens the Deposit sub-page.
    await page.goto("/");
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
    await page.locator(".account-nav").getByRole("link", { name: "Deposit", exact: true }).click();
    await page.waitForURL((u) => u.pathname === "/wallet" && u.searchParams.get("page") === "deposit");
    await page.getByTestId("wallet-deposit").waitFor();
    exchange = await page.getByTestId("deposit-exchange").inputValue();
    assert.ok(exchange, "an exchange is chosen");

    // The address of the chosen coin and network, its QR code, and the copy button.
    const address = (await page.getByTestId("deposit-address").innerText()).trim();
    const coin = await page.getByTestId("deposit-coin").inputValue();
    const network = await page.getByTestId("deposit-network").inputValue();
    const api = await getJSON(page, `/api/v1/wallet/deposit-address?exchange=${exchange}&coin=${coin}&network=${encodeURIComponent(network)}`);
    assert.equal(api.status, 200);
    assert.equal(address, api.body.address);
    assert.equal(await page.getByTestId("deposit-address-card").locator("svg").count(), 1, "a QR code");
    await page.getByTestId("copy-address").click();
    await page.getByText(texts.en.copied).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), address);

    // Demo funds: the faucet's grant shows in the balances.
    const settings = (await getJSON(page, "/api/v1/wallet/settings")).body;
    assert.equal(settings.faucet, true, "the demo stack offers demo funds");
    const before = await balances(page, exchange, settings.faucet_asset);
    assert.equal(before.status, "ok");
    await page.getByTestId("faucet-button").click();
    await page.locator('[data-testid="movement-done"], [data-testid="movement-processing"], [data-testid="movement-pending"]').first().waitFor();
    const grant = units(settings.faucet_amount);
    await until(
      page,
      async () => {
        const b = await balances(page, exchange, settings.faucet_asset);
        return b.funding + b.trading === before.funding + before.trading + grant;
      },
      "the demo funds in the balances",
    );
    await page.getByTestId("wallet-tab-overview").click();
    await page.getByTestId(`overview-${exchange}`).waitFor();
    await shot("overview-after-faucet");

    // Transfer 5 USDT from the wallet that holds it to the other one, then back.
    const start = await balances(page, exchange, "USDT");
    const from = start.funding >= units("5") ? "funding" : "trading";
    const other = from === "funding" ? "trading" : "funding";
    await page.getByTestId("wallet-tab-transfer").click();
    await page.getByTestId("transfer-form").waitFor();
    await page.getByTestId("transfer-exchange").selectOption(exchange);
    await page.getByTestId("transfer-coin").selectOption("USDT");
    await page.getByTestId("transfer-from").selectOption(from);
    await page.getByTestId("transfer-available").filter({ hasText: "USDT" }).waitFor();
    await page.getByTestId("amount").fill("5");
    await page.getByTestId("transfer-submit").click();
    await page.locator('[data-testid="movement-done"], [data-testid="movement-processing"], [data-testid="movement-pending"]').first().waitFor();
    await until(
      page,
      async () => {
        const b = await balances(page, exchange, "USDT");
        return b[from] === start[from] - units("5") && b[other] === start[other] + units("5");
      },
      `5 USDT moved from ${from} to ${other}`,
    );
    await page.getByTestId("transfer-history").getByRole("cell", { name: "5", exact: true }).first().waitFor();
    await page.getByTestId("transfer-swap").click();
    assert.equal(await page.getByTestId("transfer-from").inputValue(), other);
    await page.getByTestId("amount").fill("5");
    await page.getByTestId("transfer-submit").click();
    await until(
      page,
      async () => {
        const b = await balances(page, exchange, "USDT");
        return b.funding === start.funding && b.trading === start.trading;
      },
      `5 USDT moved back from ${other} to ${from}`,
    );

    // A withdrawal under the network's minimum: refused in the form with the spec's message, and by the API.
    const assets = (await getJSON(page, `/api/v1/wallet/assets?exchange=${exchange}`)).body.assets;
    const usdt = assets.find((a) => a.coin === "USDT");
    const net = usdt.networks.find((n) => n.withdraw_enabled);
    assert.ok(net && Number(net.withdraw_min) > 0, "USDT has a withdrawal minimum");
    const below = String(Number(net.withdraw_min) / 2);
    await page.getByTestId("wallet-tab-withdraw").click();
    await page.getByTestId("withdraw-form").waitFor();
    await page.getByTestId("withdraw-exchange").selectOption(exchange);
    await page.getByTestId("withdraw-coin").selectOption("USDT");
    await page.getByTestId("withdraw-network").selectOption(net.network);
    await page.getByTestId("withdraw-address").fill("TXe2eWalletAddress00000000000000001");
    await page.getByTestId("amount").fill(below);
    await page.getByTestId("withdraw-submit").click();
    await page.getByText(texts.en.minimum).waitFor();
    const refused = await postMovement(page, "/api/v1/wallet/withdrawals", {
      exchange,
      asset: "USDT",
      network: net.network,
      amount: below,
      address: "TXe2eWalletAddress00000000000000001",
    });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.equal(refused.body.detail, texts.en.minimum);
    assert.equal((await getJSON(page, `/api/v1/wallet/withdrawals?exchange=${exchange}`)).body.items.length, 0, "nothing was withdrawn");

    await visitAll(page, texts.en, shot, "en-dark");
  });

  // Signed in in English (the login helper's labels), then Japanese from the language menu.
  await withBrowser("wallet-phone", { theme: "light", width: 390, height: 844 }, async (page, context, shot) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await signIn(page, member);
    await page.goto("/wallet?page=overview");
    await page.getByTestId("wallet").waitFor();
    // Japanese, chosen in the language menu.
    await page.getByTestId("language-menu").filter({ visible: true }).first().selectOption("ja");
    await page.locator('html[lang="ja"]').waitFor({ state: "attached" });
    await page.getByRole("heading", { name: texts.ja.wallet, exact: true }).waitFor();
    await until(
      page,
      async () => (await getJSON(page, "/api/v1/me/preferences")).body?.preferences?.language === "ja",
      "Japanese saved with the member's preferences",
    );
    // The light theme (the member's preferences brought back the dark one chosen in the first browser).
    if ((await page.evaluate(() => document.documentElement.dataset.theme)) !== "light") {
      await page.getByTestId("theme-toggle").filter({ visible: true }).first().click();
      await page.waitForFunction(() => document.documentElement.dataset.theme === "light");
    }
    await page.getByTestId(`overview-${exchange}`).waitFor();
    await visitAll(page, texts.ja, shot, "ja-light-390");
    // The copy button in Japanese.
    await page.getByTestId("wallet-tab-deposit").click();
    await page.getByTestId("deposit-address").waitFor();
    await page.getByTestId("copy-address").click();
    await page.getByText(texts.ja.copied).waitFor();
  });
});
