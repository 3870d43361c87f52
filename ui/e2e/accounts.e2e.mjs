// End-to-end check of the dashboard's exchange accounts in Chromium through
// the edge of a running demo stack: a new member registers (code from the
// demo inbox) and opens /dashboard?page=accounts at a phone's width in the
// light theme. Broker mode makes their paper sub-accounts on Binance and OKX
// in the background: both show up Active without a reload (the list is read
// again until the first one is made), managed by exhub, without Unlink, the
// key shown by its last four characters only; the link form offers exactly
// the available exchanges without an account (or says there is none); the
// page fits 390 px and its tab is reachable with the keyboard; the same page
// in Japanese.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";
import { getJSON, outDir, register, until, withBrowser } from "./session.mjs";

const stamp = Date.now().toString(36);
const member = { email: `e2e-accounts-${stamp}@example.com`, password: "Wm4%tRq7" };
const BROKER_EXCHANGES = ["binance", "okx"];
// Broker mode makes the sub-accounts and their keys in the background after sign-up.
const ACCOUNT_WAIT_MS = 120_000;

const texts = {
  en: {
    title: "Exchange accounts",
    active: "Active",
    broker: "Broker account (managed by exhub)",
    managed: "This account is managed by exhub and cannot be unlinked.",
    none: "Every available exchange already has an account.",
  },
  ja: {
    title: "取引所アカウント",
    active: "有効",
    broker: "ブローカーアカウント（exhubが管理）",
    managed: "このアカウントはexhubが管理しているため、連携を解除できません。",
    none: "利用可能なすべての取引所にアカウントがあります。",
  },
};

// What the accounts page shows, in the language of tx, for the accounts the API lists.
async function checkAccounts(page, tx, accounts, exchanges) {
  await page.getByRole("heading", { name: tx.title }).waitFor();
  for (const ex of BROKER_EXCHANGES) {
    const card = page.getByTestId(`account-${ex}`);
    assert.equal((await page.getByTestId(`account-status-${ex}`).innerText()).trim(), tx.active);
    assert.equal((await page.getByTestId(`account-mode-${ex}`).innerText()).trim(), tx.broker);
    await card.getByText(tx.managed).waitFor();
    assert.equal(await page.getByTestId(`unlink-${ex}`).count(), 0, `no Unlink for the ${ex} broker account`);
    const a = accounts.find((x) => x.exchange === ex);
    assert.equal((await page.getByTestId(`account-key-${ex}`).innerText()).trim(), `••••${a.key_last4}`);
  }
  // The link form offers exactly the available exchanges without an account.
  const taken = new Set(accounts.map((a) => a.exchange));
  const free = exchanges.filter((x) => x.status === "available" && !taken.has(x.slug)).map((x) => x.slug);
  if (free.length === 0) {
    assert.equal((await page.getByTestId("link-none").innerText()).trim(), tx.none);
    assert.equal(await page.getByTestId("link-form").count(), 0);
  } else {
    const options = await page.getByTestId("link-exchange").locator("option").evaluateAll((os) => os.map((o) => o.value));
    assert.deepEqual(options, free);
  }
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the accounts page overflows by ${overflow}px at 390px`);
}

test("a new member's exchange accounts: a paper broker account on Binance and OKX, managed by exhub (390px, light, English and Japanese)", async () => {
  await withBrowser("accounts-phone", { theme: "light", width: 390, height: 844 }, async (page) => {
    await register(page, member);
    // Opened right after sign-up, with no reload afterwards: the accounts appear as broker mode makes them.
    const prefsRead = page.waitForResponse((r) => r.url().endsWith("/api/v1/me/preferences") && r.request().method() === "GET");
    await page.goto("/dashboard?page=accounts");
    await page.getByTestId("accounts").waitFor();
    assert.equal(await page.getByTestId("dash-tab-accounts").getAttribute("aria-current"), "page");
    for (const ex of BROKER_EXCHANGES) {
      await page.getByTestId(`account-status-${ex}`).filter({ hasText: texts.en.active }).waitFor({ timeout: ACCOUNT_WAIT_MS });
    }
    const list = await getJSON(page, "/api/v1/accounts");
    assert.equal(list.status, 200);
    assert.equal(list.body.broker, true, "demo mode runs broker accounts");
    for (const ex of BROKER_EXCHANGES) {
      const a = list.body.accounts.find((x) => x.exchange === ex);
      assert.ok(a, `an account on ${ex}`);
      assert.equal(a.mode, "broker");
      assert.match(a.key_last4, /^.{4}$/);
    }
    // The API shows no more of a key than its end.
    const json = JSON.stringify(list.body);
    assert.ok(!/secret|passphrase|api_key"/i.test(json), json);
    const { body: ex } = await getJSON(page, "/api/v1/exchanges");
    await checkAccounts(page, texts.en, list.body.accounts, ex.exchanges);

    // The sub-page's tab is reachable with the keyboard from another sub-page.
    await page.getByTestId("dash-tab-profile").click();
    await page.getByTestId("dashboard-profile").waitFor();
    await page.getByTestId("dash-tab-accounts").focus();
    await page.keyboard.press("Enter");
    await page.getByTestId("accounts").waitFor();
    await page.getByTestId("account-binance").waitFor();

    // Japanese, chosen in the language menu once the member's preferences are read, and kept on the next load.
    await prefsRead;
    await page.getByTestId("language-menu").filter({ visible: true }).first().selectOption("ja");
    await until(
      page,
      async () => (await getJSON(page, "/api/v1/me/preferences")).body?.preferences?.language === "ja",
      "Japanese saved with the member's preferences",
    );
    await page.reload();
    await page.getByTestId("accounts").waitFor();
    await page.locator('html[lang="ja"]').waitFor({ state: "attached" });
    await page.getByTestId("account-okx").waitFor();
    await checkAccounts(page, texts.ja, list.body.accounts, ex.exchanges);
    await mkdir(outDir, { recursive: true });
    await page.screenshot({ path: path.join(outDir, "accounts-ja-light-390.png"), fullPage: true });
  });
});
