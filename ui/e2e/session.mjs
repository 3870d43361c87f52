// What the member-facing end-to-end tests share: a Chromium with its own
// profile in a given language, theme and size (page errors fail the test, a
// screenshot is kept on failure), the API read from the page with the
// member's cookie, a bounded wait for a condition, and signing up (code from
// the demo inbox) and in.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { TIMEOUT, baseURL, chromiumArgs, executablePath, outDir } from "./browser.mjs";
import { waitForCode } from "./inbox.mjs";

export { TIMEOUT, baseURL, outDir };

const BROWSER_LOCALES = { ja: "ja-JP", ko: "ko-KR" };

// Runs fn(page, context, shot) in a fresh browser profile. locale and theme are stored as the app stores a choice,
// once per profile (store: false stores none; "ko" is a Korean browser with no stored choice: the app falls back to
// English). Page errors fail the test, and console errors too with consoleErrors. shot(label) writes a screenshot
// to e2e/out/<name>-<label>.png (the whole page unless fullPageShots is false). On failure a full-page screenshot
// is written to e2e/out/<name>-failure-<time>.png.
export async function withBrowser(
  name,
  { locale = "en", theme = "dark", width = 1280, height = 900, store = true, consoleErrors = false, fullPageShots = true } = {},
  fn,
) {
  const profile = await mkdtemp(path.join(tmpdir(), "exhub-e2e-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: chromiumArgs,
    locale: BROWSER_LOCALES[locale] ?? "en-US",
    viewport: { width, height },
    baseURL,
  });
  context.setDefaultTimeout(TIMEOUT);
  if (store) {
    await context.addInitScript(
      ([l, t]) => {
        if (!localStorage.getItem("exhub.e2e")) {
          if (l !== "ko") localStorage.setItem("exhub.locale", l);
          localStorage.setItem("exhub.theme", t);
          localStorage.setItem("exhub.e2e", "1");
        }
      },
      [locale, theme],
    );
  }
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  if (consoleErrors) {
    page.on("console", (msg) => {
      if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
    });
  }
  const shot = async (label) => {
    await mkdir(outDir, { recursive: true });
    await page.screenshot({ path: path.join(outDir, `${name}-${label}.png`), fullPage: fullPageShots });
  };
  try {
    await fn(page, context, shot);
    assert.deepEqual(problems, [], consoleErrors ? "the page logged errors" : "the page threw");
  } catch (err) {
    await mkdir(outDir, { recursive: true });
    const file = path.join(outDir, `${name}-failure-${Date.now()}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
    console.error(`screenshot: ${file}`);
    if (problems.length) console.error(problems.join("\n"));
    throw err;
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}

// GET url from the page (the member's cookie): { status, body } with body null when it is not JSON.
export async function getJSON(page, url) {
  return page.evaluate(async (u) => {
    const r = await fetch(u, { credentials: "same-origin" });
    let body = null;
    try {
      body = await r.json();
    } catch {
      body = null;
    }
    return { status: r.status, body };
  }, url);
}

// Waits (bounded) until fn() is truthy; returns its last value.
export async function until(page, fn, what, timeout = 60_000) {
  const deadline = Date.now() + timeout;
  let v = await fn();
  while (!v && Date.now() < deadline) {
    await page.waitForTimeout(500);
    v = await fn();
  }
  assert.ok(v, `timed out waiting for ${what}`);
  return v;
}

// Signs up by e-mail (the sign-up screen in English) and verifies the address with the code the demo inbox caught;
// the member is signed in after. ref: a referral code given in the share link.
export async function register(page, who, { ref } = {}) {
  await page.goto(ref ? `/regist?ref=${encodeURIComponent(ref)}` : "/regist");
  await page.getByRole("heading", { name: "Sign Up" }).waitFor();
  if (ref) assert.equal(await page.getByLabel("Referral code (optional)").inputValue(), ref, "the share link prefills the code");
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password", { exact: true }).fill(who.password);
  await page.getByLabel("Confirm password").fill(who.password);
  await page.getByLabel("I have read and agree to the Terms of Use").check();
  const since = Date.now();
  await page.getByTestId("register-submit").click();
  await page.getByText("successfully registered!").waitFor();
  await page.waitForURL(/\/otp\?flow=/);
  const { code } = await waitForCode(who.email, since);
  await page.getByLabel("Verification code").fill(code);
  await page.getByRole("button", { name: "Verify" }).click();
  await page.getByText("Your address has been verified.").waitFor();
}

// Submits the login form (in English) with an e-mail or mobile number and a password. It does not wait for the
// answer: the caller waits for what follows (the next page, a second factor, an error).
export async function login(page, id, password, { remember = false, returnTo } = {}) {
  await page.goto(returnTo ? `/login?return_to=${encodeURIComponent(returnTo)}` : "/login");
  await page.getByLabel("Email or mobile number").fill(id);
  await page.getByLabel("Password", { exact: true }).fill(password);
  if (remember) await page.getByLabel("Stay logged in for 5 days").check();
  await page.getByTestId("login-submit").click();
}

// Logs in a member without a second factor and waits to leave the login page.
export async function signIn(page, who) {
  await login(page, who.email, who.password);
  await page.waitForURL((u) => !u.pathname.startsWith("/login"));
}

// Sends a state-changing API request from the page as the app does (the member's cookie and the CSRF token from its
// cookie): { status, body }.
export async function send(page, method, url, body) {
  return page.evaluate(
    async ([m, u, b]) => {
      const token = document.cookie
        .split("; ")
        .find((c) => c.startsWith("exhub_csrf="))
        ?.slice("exhub_csrf=".length);
      const headers = { Accept: "application/json", "Content-Type": "application/json" };
      if (token) headers["X-CSRF-Token"] = decodeURIComponent(token);
      const r = await fetch(u, { method: m, credentials: "same-origin", headers, body: b === undefined ? undefined : JSON.stringify(b) });
      let out = null;
      try {
        out = await r.json();
      } catch {
        out = null;
      }
      return { status: r.status, body: out };
    },
    [method, url, body],
  );
}
