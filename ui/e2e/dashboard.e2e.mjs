// End-to-end check of the dashboard in Chromium through the edge of a running
// demo stack: a member registers (code from the demo inbox), changes the
// nickname, stars a market (kept across a reload and in a second browser of
// the same member), changes the password (the 24-hour withdrawal lockout
// shows), enables the authenticator in the five steps, uploads a KYC image
// that the demo auto-review approves, and shares the referral link; a second
// member registers through that link, keeps the favourite starred before
// signing up, and sees none of the first member's data. Tests run in order.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";
import { deflateSync } from "node:zlib";
import { freshTotp } from "./inbox.mjs";
import { baseURL, getJSON, login, outDir, register, until, withBrowser as browser } from "./session.mjs";

const stamp = Date.now().toString(36);
const a = {
  email: `e2e-dash-a-${stamp}@example.com`,
  password: "Kp7!vRw2",
  nickname: `Ann ${stamp}`,
};
const b = { email: `e2e-dash-b-${stamp}@example.com`, password: "Hq5$tLm9" };
const newPassword = "Zq3#mNt8";
let favorite = "";
let referralCode = "";
let totpSecret = "";
let totpStep = -1;

// A browser with its own profile (cookies and storage), in the given language, theme and width.
const withBrowser = (name, opts, fn) => browser(`dashboard-${name}`, opts, fn);

async function favorites(page) {
  const r = await getJSON(page, "/api/v1/me/favorites");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.favorites.map(
    (f) => `${f.exchange}:${f.market_type}:${f.symbol}`,
  );
}

// A valid 1x1 PNG (the BFF sniffs the content).
function png() {
  const crc = (buf) => {
    let c = ~0;
    for (const x of buf) {
      c ^= x;
      for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
    }
    return ~c >>> 0;
  };
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  const idat = deflateSync(Buffer.from([0, 255, 0, 0]));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", idat),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

test("a member's dashboard: nickname, favourites, password and lockout, authenticator, KYC, referral link", async () => {
  await withBrowser("member-a", {}, async (page) => {
    await register(page, a);

    // /dashboard opens Profile; the nickname is saved and read back after a reload.
    await page.goto("/dashboard");
    await page.getByTestId("dashboard-profile").waitFor();
    assert.equal(
      await page.getByTestId("dash-tab-profile").getAttribute("aria-current"),
      "page",
    );
    const id = await until(
      page,
      async () => (await page.getByTestId("profile-id").textContent()).trim(),
      "the user id",
    );
    assert.match(id, /^[0-9a-f-]{36}$/);
    await page.getByLabel("Nickname").fill(a.nickname);
    await page.getByTestId("nickname-save").click();
    await page.getByText("Modified successfully!").waitFor();
    await page.reload();
    await until(
      page,
      async () =>
        (await page.getByLabel("Nickname").inputValue()) === a.nickname,
      "the saved nickname",
    );

    // A favourite, on the server and kept across a reload: starred as soon as the table shows, whether or not
    // the member's server list has been read yet.
    await page.goto("/market");
    await page.getByTestId("markets-table").waitFor();
    const star = page
      .locator('button[aria-pressed="false"][aria-label^="Add "]')
      .first();
    const label = await star.getAttribute("aria-label");
    favorite = label.replace(/^Add /, "").replace(/ to favorites$/, "");
    await star.click();
    const list = await until(
      page,
      async () =>
        (await favorites(page)).length === 1 ? await favorites(page) : null,
      "the favourite on the server",
    );
    assert.ok(list[0].endsWith(`:${favorite}`), `${list[0]} is ${favorite}`);
    await page.reload();
    await page.getByTestId("markets-table").waitFor();
    await page
      .getByRole("button", { name: `Remove ${favorite} from favorites` })
      .first()
      .waitFor();

    // The Reward page: the own code and its share link.
    await page.goto("/dashboard?page=self_referral");
    referralCode = (
      await page.getByTestId("referral-code").textContent()
    ).trim();
    assert.match(referralCode, /^[A-Z0-9]{4,16}$/);
    assert.equal(
      (await page.getByTestId("referral-link").textContent()).trim(),
      `${baseURL}/regist?ref=${referralCode}`,
    );

    // Password change: the four rules, then the lockout from the settings hook.
    await page.goto("/dashboard?page=security");
    await page.getByLabel("New password").fill("abc");
    await page.getByTestId("password-submit").click();
    for (const r of ["length", "number", "uppercase", "special"]) {
      assert.equal(
        await page
          .locator(`[data-rule="${r}"]`)
          .getAttribute("data-shown-error"),
        "true",
        r,
      );
    }
    await page.getByLabel("New password").fill(newPassword);
    await page.getByLabel("Confirm password").fill(newPassword);
    await page.getByTestId("password-submit").click();
    await page.getByText("Modified successfully!").waitFor();
    await page.getByTestId("withdraw-lockout").waitFor({ timeout: 60_000 });
    const sec = await getJSON(page, "/api/v1/me/security");
    assert.equal(sec.body.withdraw_locked, true);
    a.password = newPassword;

    // Google Authenticator in five steps.
    await page.getByTestId("totp-setup").waitFor();
    await page.getByTestId("totp-next").click();
    totpSecret = (await page.getByTestId("totp-secret").textContent()).trim();
    assert.match(totpSecret, /^[A-Z2-7]{16,}$/);
    assert.match(
      await page.getByTestId("totp-qr").getAttribute("src"),
      /^data:image\/png;base64,/,
    );
    await page.getByTestId("totp-next").click();
    await page.getByTestId("lookup-generate").click();
    await page.getByTestId("lookup-secrets").locator("li").first().waitFor();
    const codes = await page
      .getByTestId("lookup-secrets")
      .locator("li")
      .allTextContents();
    assert.ok(codes.length >= 10, `recovery codes: ${codes.length}`);
    assert.equal(
      await page.getByTestId("totp-next").isDisabled(),
      true,
      "next waits until the codes are saved",
    );
    await page.getByTestId("lookup-saved").check();
    await page.getByTestId("totp-next").click();
    await page.getByTestId("totp-next").click();
    const first = await freshTotp(totpSecret, -1);
    totpStep = first.step;
    await page.getByTestId("totp-code").fill(first.code);
    await page.getByTestId("totp-enable").click();
    await page.getByText("Setting successful!").first().waitFor();
    await page.getByTestId("totp-enabled").waitFor();
    const me = await until(
      page,
      async () => {
        const m = await getJSON(page, "/api/v1/me");
        return m.status === 200 &&
          m.body.two_factor.totp &&
          m.body.two_factor.lookup_secret
          ? m
          : null;
      },
      "two factors on /api/v1/me",
    );
    assert.equal(me.body.aal, "aal2");
    // Only an e-mail is bound: OTP reset explains why it is not offered.
    await page.getByTestId("otp-reset-unavailable").waitFor();

    // KYC: 5 MB checked in the browser, then a real image, submitted and approved by the demo auto-review.
    await page.goto("/dashboard?page=profile");
    await page.getByTestId("kyc-start").click();
    await page.getByTestId("kyc-file").waitFor();
    await page.getByTestId("kyc-file").setInputFiles({
      name: "big.png",
      mimeType: "image/png",
      buffer: Buffer.alloc(5 * 1024 * 1024 + 1),
    });
    await page
      .getByText("The attachment size exceeds the limit (maximum 5MB)")
      .waitFor();
    await page.getByTestId("kyc-file").setInputFiles({
      name: "passport.png",
      mimeType: "image/png",
      buffer: png(),
    });
    await page.getByTestId("kyc-documents").getByText("passport.png").waitFor();
    await page.getByTestId("kyc-submit").click();
    await page
      .locator('[data-testid="kyc-state"][data-state="in_review"]')
      .waitFor();
    await page
      .locator('[data-testid="kyc-state"][data-state="completed"]')
      .waitFor({ timeout: 90_000 });

    // The sub-page opened last is Reward (remembered on the server too).
    await page.goto("/dashboard?page=self_referral");
    await page.getByTestId("referral-code").waitFor();
    await until(
      page,
      async () =>
        (await getJSON(page, "/api/v1/me/preferences")).body?.preferences
          ?.sub_pages?.dashboard === "self_referral",
      "the remembered sub-page on the server",
    );
  });

  // A second browser of the same member (password, then the authenticator) sees the same favourite.
  await withBrowser(
    "member-a-second",
    { width: 360, theme: "light" },
    async (page) => {
      await login(page, a.email, a.password);
      await page.waitForURL(/\/otpauth/);
      const next = await freshTotp(totpSecret, totpStep);
      totpStep = next.step;
      await page.getByLabel("Authentication code").fill(next.code);
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByText("Login succeeded!").waitFor();
      const list = await favorites(page);
      assert.equal(list.length, 1, JSON.stringify(list));
      assert.ok(list[0].endsWith(`:${favorite}`), `${list[0]} is ${favorite}`);
      await page.goto("/market");
      await page
        .getByRole("button", { name: `Remove ${favorite} from favorites` })
        .first()
        .waitFor();
      // The sub-page last opened in the first browser (Reward) is remembered on the server.
      await page.goto("/dashboard");
      await page.getByTestId("dashboard-reward").waitFor();
      // Phone width: the tabs and the cards fit, and the tabs are reachable with the keyboard.
      const overflow = await page
        .getByTestId("dashboard")
        .evaluate((el) => el.scrollWidth - el.clientWidth);
      assert.ok(
        overflow <= 1,
        `the dashboard overflows by ${overflow}px at 360 px`,
      );
      await page.getByTestId("dash-tab-security").focus();
      await page.keyboard.press("Enter");
      await page.getByTestId("dashboard-security").waitFor();
      await page.getByTestId("totp-enabled").waitFor();
      await mkdir(outDir, { recursive: true });
      await page.screenshot({
        path: path.join(outDir, "dashboard-security-360-light.png"),
        fullPage: true,
      });
    },
  );
});

test("another member, registered through the share link, sees none of it", async () => {
  await withBrowser("member-b", { locale: "ja" }, async (page) => {
    // Starred as a visitor, merged into the new member's list on sign-in.
    await page.goto("/market");
    await page.getByTestId("markets-table").waitFor();
    const star = page.locator('button[aria-pressed="false"]').nth(1);
    await star.click();
    const local = await page.evaluate(() =>
      JSON.parse(localStorage.getItem("exhub.trade.favorites") ?? "[]"),
    );
    assert.equal(local.length, 1);

    await page.evaluate(() => localStorage.setItem("exhub.locale", "en"));
    await register(page, b, { ref: referralCode });
    const mine = await until(
      page,
      async () => {
        const f = await favorites(page);
        return f.length === 1 ? f : null;
      },
      "the merged favourite",
    );
    assert.deepEqual(mine, local);

    // The language chosen in the menu is the member's preference (the stored
    // one wins over this browser's on the next page load).
    await page.getByTestId("language-menu").selectOption("ja");
    await until(
      page,
      async () =>
        (await getJSON(page, "/api/v1/me/preferences")).body?.preferences
          ?.language === "ja",
      "the language saved in the preferences",
    );
    await page.evaluate(() => localStorage.setItem("exhub.locale", "en"));
    await page.goto("/dashboard?page=profile");
    await page.getByTestId("dashboard-profile").waitFor();
    await until(
      page,
      async () => (await page.locator("html").getAttribute("lang")) === "ja",
      "Japanese from the preferences",
    );
    await mkdir(outDir, { recursive: true });
    await page.screenshot({
      path: path.join(outDir, "dashboard-profile-ja-dark.png"),
      fullPage: true,
    });
    assert.notEqual(
      await page.getByLabel("ニックネーム").inputValue(),
      a.nickname,
    );
    assert.equal((await getJSON(page, "/api/v1/me/kyc")).body.state, "none");
    assert.equal(
      (await getJSON(page, "/api/v1/me/security")).body.withdraw_locked,
      false,
    );
    await page.goto("/dashboard?page=self_referral");
    assert.notEqual(
      (await page.getByTestId("referral-code").textContent()).trim(),
      referralCode,
    );
    await page.getByTestId("referees-empty").waitFor();
  });

  // The referrer sees the new member among the referees.
  await withBrowser("member-a-referees", {}, async (page) => {
    await login(page, a.email, a.password);
    await page.waitForURL(/\/otpauth/);
    const next = await freshTotp(totpSecret, totpStep);
    totpStep = next.step;
    await page.getByLabel("Authentication code").fill(next.code);
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByText("Login succeeded!").waitFor();
    await page.goto("/dashboard?page=self_referral");
    // The list arrives after the page: wait for it before counting.
    await page.getByTestId("referees").locator("li").first().waitFor();
    assert.equal(await page.getByTestId("referees").locator("li").count(), 1);
  });
});
