// End-to-end check of the sign-in screens in Chromium through the edge of a
// running demo stack (Kratos, the BFF's /api/v1/me and self-service gate, the
// demo inbox): register by e-mail with the code from the inbox, log out, a
// wrong password, log in with and without "stay logged in" (cookie lifetime),
// a protected page's redirect and return, recovery by code, enabling the
// authenticator and logging in with a TOTP code, the login screen in
// Japanese, and registering and logging in by mobile number with the SMS code.
// Tests run in order and share one new account (the mobile one has its own).
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import { freshTotp, waitForCode } from "./inbox.mjs";
import { baseURL, getJSON, login as submitLogin, withBrowser as browser } from "./session.mjs";

const stamp = Date.now().toString(36);
const email = `e2e-${stamp}@example.com`;
let password = "Kp7!vRw2";
const newPassword = "Zq3#mNt8";
let totpSecret = "";
let totpStep = -1;
let recoveryCodes = [];

// locale "ko" is a Korean browser with no stored choice (the app falls back to English).
const withBrowser = (name, opts, fn) => browser(`auth-${name}`, opts, fn);

const me = (page) => getJSON(page, "/api/v1/me");

async function sessionCookie(context) {
  return (await context.cookies(baseURL)).find((c) => c.name === "exhub_session");
}

function login(page, { id = email, pw = password, remember = false, returnTo } = {}) {
  return submitLogin(page, id, pw, { remember, returnTo });
}

async function logoutByUI(page) {
  await page.getByRole("button", { name: "Log out" }).first().click();
  // The confirmation (title "Log out", OK); logout happens only when Kratos confirms it.
  await page.getByRole("button", { name: "OK", exact: true }).click();
  await page.waitForURL(/\/login/);
}

test("register by e-mail, verify with the code from the demo inbox, log out", async () => {
  await withBrowser("register", {}, async (page) => {
    await page.goto("/");
    // The home quick-register value prefills the form.
    await page.evaluate((v) => localStorage.setItem("exhub.register.account", v), email);
    await page.goto("/regist");
    await assert.doesNotReject(page.getByRole("heading", { name: "Sign Up" }).waitFor());
    assert.equal(await page.getByLabel("Email").inputValue(), email);
    // The four rules update while typing.
    await page.getByLabel("Password", { exact: true }).fill("abc");
    assert.equal(await page.locator('[data-rule="uppercase"]').getAttribute("data-ok"), "false");
    await page.getByLabel("Password", { exact: true }).fill(password);
    for (const r of ["length", "number", "lowercase", "uppercase", "special"]) {
      assert.equal(await page.locator(`[data-rule="${r}"]`).getAttribute("data-ok"), "true", r);
    }
    await page.getByLabel("Confirm password").fill(password);
    await page.getByLabel("I have read and agree to the Terms of Use").check();
    const since = Date.now();
    await page.getByTestId("register-submit").click();
    await page.getByText("successfully registered!").waitFor();
    await page.waitForURL(/\/otp\?flow=/);
    assert.match(await page.getByTestId("verification-hint").textContent(), new RegExp(`sent a code to ${email.replace(/[.]/g, "\\.")}.*valid for 30 minutes`));

    const { code } = await waitForCode(email, since);
    // The demo inbox page shows the same code.
    const otpURL = page.url();
    await page.goto("/inbox");
    await page.getByTestId("inbox-code").filter({ hasText: code }).first().waitFor();
    await page.goto(otpURL);
    await page.getByLabel("Verification code").fill(code);
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByText("Your address has been verified.").waitFor();

    // The BFF caches a session's member briefly: wait (bounded) for the verified address to show.
    let m = await me(page);
    for (const deadline = Date.now() + 60_000; !(m.status === 200 && m.body.email_verified) && Date.now() < deadline; ) {
      await page.waitForTimeout(1000);
      m = await me(page);
    }
    assert.equal(m.status, 200, JSON.stringify(m.body));
    assert.equal(m.body.email, email);
    assert.equal(m.body.email_verified, true, JSON.stringify(m.body));

    await page.goto("/");
    await logoutByUI(page);
    assert.equal((await me(page)).status, 401, "logged out at the BFF too");
  });
});

test("a wrong password is refused with the product's message", async () => {
  await withBrowser("wrong-password", {}, async (page) => {
    await login(page, { pw: "Wrong9!pw" });
    const alert = page.getByTestId("flow-messages").getByRole("alert");
    await alert.waitFor();
    assert.equal(await alert.textContent(), "The account or password is wrong.");
    assert.equal((await me(page)).status, 401);
  });
});

test("stay logged in sets a 5-day cookie; the default is a browser-session cookie", async () => {
  await withBrowser("remember", {}, async (page, context) => {
    await login(page, { remember: true });
    await page.getByText("Login succeeded!").waitFor();
    const c = await sessionCookie(context);
    assert.ok(c, "exhub_session is set");
    const days = (c.expires * 1000 - Date.now()) / 86_400_000;
    assert.ok(days > 4.5 && days <= 5.01, `expires in ${days} days`);
    assert.equal(c.httpOnly, true);
  });
  await withBrowser("no-remember", {}, async (page, context) => {
    await login(page);
    await page.getByText("Login succeeded!").waitFor();
    const c = await sessionCookie(context);
    assert.ok(c, "exhub_session is set");
    assert.equal(c.expires, -1, "a session cookie has no expiry");
    assert.equal((await me(page)).status, 200);
  });
});

test("a protected page sends a visitor to /login and back after sign-in", async () => {
  await withBrowser("protected", {}, async (page) => {
    await page.goto("/wallet?page=deposit");
    await page.waitForURL(/\/login\?return_to=%2Fwallet%3Fpage%3Ddeposit/);
    await page.getByLabel("Email or mobile number").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.getByTestId("login-submit").click();
    await page.waitForURL((u) => u.pathname === "/wallet" && u.search === "?page=deposit");
  });
  // A return_to of another site is ignored.
  await withBrowser("protected-foreign", {}, async (page) => {
    await login(page, { returnTo: "https://example.org/" });
    await page.getByText("Login succeeded!").waitFor();
    await page.waitForURL((u) => u.origin === new URL(baseURL).origin && u.pathname === "/");
  });
});

test("recovery by code, then the new password logs in", async () => {
  await withBrowser("recovery", {}, async (page) => {
    await page.goto("/login");
    await page.getByRole("link", { name: "Forgot password?" }).click();
    await page.waitForURL(/\/forgotPassword_A/);
    const since = Date.now();
    await page.getByLabel("Email").fill(email);
    await page.getByRole("button", { name: "Send code" }).click();
    await page.waitForURL(/\/forgotPassword_B\?flow=/);
    const { code } = await waitForCode(email, since);
    await page.getByLabel("Verification code").fill(code);
    await page.getByLabel("New password").fill(newPassword);
    await page.getByLabel("Confirm password").fill(newPassword);
    await page.getByTestId("reset-submit").click();
    await page.getByText("Modified successfully!").waitFor();
    await page.waitForURL((u) => u.pathname === "/");
    assert.equal((await me(page)).status, 200, "recovery signs the member in");
    password = newPassword;
  });
  await withBrowser("recovery-login", {}, async (page) => {
    await login(page);
    await page.getByText("Login succeeded!").waitFor();
    assert.equal((await me(page)).status, 200);
  });
});

test("enable the authenticator, then log in with a TOTP code", async () => {
  await withBrowser("totp", {}, async (page) => {
    await login(page);
    await page.getByText("Login succeeded!").waitFor();
    // The dashboard's five steps: app, QR code and key, recovery codes, guide, enable.
    await page.goto("/dashboard/security");
    await page.getByTestId("totp-setup").waitFor();
    await page.getByTestId("totp-next").click();
    await page.getByTestId("totp-qr").waitFor();
    totpSecret = (await page.getByTestId("totp-secret").textContent()).trim();
    assert.match(totpSecret, /^[A-Z2-7]{16,}$/);
    await page.getByTestId("totp-next").click();
    await page.getByTestId("lookup-generate").click();
    await page.getByTestId("lookup-secrets").waitFor();
    recoveryCodes = (await page.getByTestId("lookup-secrets").locator("li").allTextContents()).map((c) => c.trim());
    assert.ok(recoveryCodes.length >= 8, `recovery codes: ${recoveryCodes.length}`);
    await page.getByTestId("lookup-saved").check();
    await page.getByTestId("totp-next").click();
    await page.getByTestId("totp-next").click();
    const first = await freshTotp(totpSecret, -1);
    totpStep = first.step;
    await page.getByTestId("totp-code").fill(first.code);
    await page.getByTestId("totp-enable").click();
    // The authenticator shows as on only once the recovery codes are stored too, and the toast says so.
    await page.getByTestId("totp-enabled").waitFor();
    await page.locator("#exhub-toasts").getByText("Setting successful!").waitFor();
  });
  await withBrowser("totp-login", {}, async (page) => {
    await login(page, { returnTo: "/history" });
    await page.waitForURL(/\/otpauth/);
    assert.equal((await me(page)).status, 403, "aal2 still due");
    const next = await freshTotp(totpSecret, totpStep);
    await page.getByLabel("Authentication code").fill(next.code);
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByText("Login succeeded!").waitFor();
    await page.waitForURL((u) => u.pathname === "/history");
    const m = await me(page);
    assert.equal(m.status, 200);
    assert.equal(m.body.aal, "aal2");
    assert.equal(m.body.two_factor.totp, true);
  });
});

test("without the phone, a recovery code saved during the setup passes the second factor", async () => {
  assert.ok(recoveryCodes.length > 0, "the authenticator test saved recovery codes");
  await withBrowser("lookup-login", {}, async (page) => {
    await login(page);
    await page.waitForURL(/\/otpauth/);
    await page.getByTestId("tab-lookup").click();
    await page.getByLabel("Recovery code").fill(recoveryCodes[0]);
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByText("Login succeeded!").waitFor();
    assert.equal((await me(page)).status, 200);
  });
});

test("the login screen in Japanese, light theme, phone width", async () => {
  await withBrowser("ja", { locale: "ja", theme: "light", width: 360 }, async (page) => {
    await page.goto("/login");
    await page.getByRole("heading", { name: "ログイン" }).waitFor();
    assert.equal(await page.title(), "exhub | ログイン");
    await page.getByLabel("メールアドレスまたは携帯電話番号").fill(email);
    await page.getByLabel("パスワード", { exact: true }).fill("Wrong9!pw");
    assert.ok(await page.getByLabel("5日間ログインしたままにする").isVisible());
    // Keyboard: Enter submits from the password field.
    await page.getByLabel("パスワード", { exact: true }).press("Enter");
    const alert = page.getByTestId("flow-messages").getByRole("alert");
    await alert.waitFor();
    assert.equal(await alert.textContent(), "アカウントまたはパスワードが正しくありません。");
    assert.equal(await page.evaluate(() => document.documentElement.getAttribute("data-theme")), "light");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no horizontal scroll at 360 px (${overflow})`);
  });
});

test("a Korean browser gets the sign-in screens in English", async () => {
  await withBrowser("ko", { locale: "ko" }, async (page) => {
    await page.goto("/regist");
    await page.getByRole("heading", { name: "Sign Up" }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), "en");
  });
});

test("register by mobile number with the SMS code from the demo inbox, then log in by mobile", async () => {
  // A Japanese mobile number of this run: +81 90, a non-zero digit (090-0… is not a mobile range), 7 digits.
  const n = Date.now();
  const national = `90${1 + (n % 9)}${String(Math.floor(n / 9) % 10_000_000).padStart(7, "0")}`;
  const phone = `+81${national}`;
  await withBrowser("register-mobile", {}, async (page) => {
    await page.goto("/regist");
    await page.getByRole("heading", { name: "Sign Up" }).waitFor();
    await page.getByTestId("tab-mobile").click();
    await page.getByTestId("country-code").selectOption("81");
    await page.getByLabel("Mobile number").fill(national);
    await page.getByLabel("Password", { exact: true }).fill(password);
    await page.getByLabel("Confirm password").fill(password);
    await page.getByLabel("I have read and agree to the Terms of Use").check();
    const since = Date.now();
    await page.getByTestId("register-submit").click();
    await page.getByText("successfully registered!").waitFor();
    await page.waitForURL(/\/otp\?flow=/);

    // The SMS goes through Kratos' HTTP courier to the same inbox, addressed to the number's digits.
    const { code } = await waitForCode(`${phone.slice(1)}@sms.exhub.local`, since);
    await page.getByLabel("Verification code").fill(code);
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByText("Your address has been verified.").waitFor();
    let m = await me(page);
    assert.equal(m.status, 200, JSON.stringify(m.body));
    assert.equal(m.body.phone, phone);
    assert.equal(m.body.phone_verified, true, JSON.stringify(m.body));

    await page.goto("/");
    await logoutByUI(page);
    await login(page, { id: phone });
    await page.getByText("Login succeeded!").waitFor();
    m = await me(page);
    assert.equal(m.status, 200);
    assert.equal(m.body.phone, phone);
  });
});
