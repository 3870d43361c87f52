// End-to-end check of events, banners and announcements in Chromium through
// the edge of a running demo stack (the BFF seeds the demo content on its
// first start): the home carousel shows the two home banners and pauses
// under the keyboard, the announcement strip links to the help center, the
// event list and an event's page in English (dark) and Japanese (light, at
// phone width), an unknown event's not-found state, and a signed-in member's
// home with the estimated balance and today's change. The content routes are
// public and cacheable.
//
// EXHUB_URL (default http://127.0.0.1:8080) is the edge; CHROMIUM_PATH
// overrides /usr/bin/chromium.
import assert from "node:assert/strict";
import { test } from "node:test";
import { getJSON, until, withBrowser as browser } from "./session.mjs";

const withBrowser = (name, opts, fn) => browser(`content-${name}`, opts, fn);

// Every <img> in the element has loaded a real picture.
async function imagesLoaded(page, selector) {
  return page.$$eval(selector, (imgs) => imgs.length > 0 && imgs.every((i) => i.complete && i.naturalWidth > 0));
}

test("home: two banners in the carousel, announcements linking out", async () => {
  await withBrowser("home", { consoleErrors: true }, async (page, _ctx, shot) => {
    await page.goto("/");
    const carousel = page.getByTestId("banner-carousel");
    await carousel.waitFor();
    assert.equal(await page.getByTestId("banner-slide").count(), 2);
    await until(page, () => imagesLoaded(page, "[data-testid=banner-slide]:not([hidden]) img"), "the banner image");
    const first = page.getByTestId("banner-slide").first();
    assert.match(await first.getByTestId("banner-caption").textContent(), /Trading Cup/);
    assert.equal(await first.locator("a").getAttribute("href"), "/eventDetail/trading-cup");
    // The second banner shows by itself, then the keyboard stops the rotation.
    await until(page, async () => !(await page.getByTestId("banner-slide").nth(1).isHidden()), "autoplay to the second banner", 20_000);
    await carousel.getByRole("button", { name: "Show banner 1" }).focus();
    assert.equal(await carousel.getAttribute("data-paused"), "true");
    await page.keyboard.press("Enter");
    assert.equal(await first.isHidden(), false);
    await page.getByTestId("banner-pause").press("Enter");
    assert.equal(await page.getByTestId("banner-pause").textContent(), "Play");

    const ann = page.getByTestId("announcements");
    await ann.waitFor();
    const links = ann.getByRole("link");
    assert.ok((await links.count()) >= 1);
    assert.match(await links.first().getAttribute("href"), /^https:\/\//);
    assert.equal(await links.first().getAttribute("target"), "_blank");
    await page.getByTestId("home-events").getByRole("link", { name: "See all events" }).waitFor();
    await shot("home-en-dark");

    // The public routes answer the same to everybody and may be cached.
    const r = await page.evaluate(async () => {
      const res = await fetch("/api/v1/content/banners?place=home&page=1&page_size=2&lang=en");
      return { status: res.status, cc: res.headers.get("cache-control"), body: await res.json() };
    });
    assert.equal(r.status, 200);
    assert.match(r.cc, /public/);
    assert.equal(r.body.list.length, 2);
    assert.equal(r.body.page_size, 2);
  });
});

test("events in English: the list, then one event", async () => {
  await withBrowser("en", { consoleErrors: true }, async (page, _ctx, shot) => {
    await page.goto("/event");
    await page.getByTestId("event-list").waitFor();
    assert.equal(await page.title(), "exhub | Events");
    await page.getByTestId("events-banner").waitFor();
    const cup = page.locator("[data-testid=event-card][data-event-id=trading-cup]");
    await cup.getByRole("heading", { name: "exhub Trading Cup" }).waitFor();
    assert.equal(await cup.getByTestId("event-status").textContent(), "Ongoing");
    await until(page, () => imagesLoaded(page, "[data-testid=event-card] img"), "the event images");
    await shot("list-en-dark");

    await page.getByRole("button", { name: "Ended" }).click();
    await page.locator("[data-testid=event-card][data-event-id=welcome-bonus]").waitFor();
    assert.match(page.url(), /status=ended/);

    await page.goto("/event");
    await cup.getByRole("link").click();
    await page.getByTestId("event-detail").waitFor();
    assert.match(page.url(), /\/eventDetail\/trading-cup$/);
    await page.getByRole("heading", { level: 1, name: "exhub Trading Cup" }).waitFor();
    assert.equal(await page.title(), "exhub | exhub Trading Cup");
    const body = page.getByTestId("event-body");
    await body.getByRole("heading", { name: "How it works" }).waitFor();
    assert.equal(await body.locator("li").count(), 3);
    assert.equal(await body.getByRole("link").getAttribute("target"), "_blank");
    assert.ok((await page.getByTestId("event-dates").textContent()).includes("–"));
    await until(page, () => imagesLoaded(page, ".event-detail-image"), "the event image");
    await shot("detail-en-dark");
  });
});

test("events in Japanese, light theme, at phone width", async () => {
  await withBrowser("ja", { locale: "ja", theme: "light", width: 390, height: 844, consoleErrors: true }, async (page, _ctx, shot) => {
    await page.goto("/event");
    const cup = page.locator("[data-testid=event-card][data-event-id=trading-cup]");
    await cup.getByRole("heading", { name: "exhub トレーディングカップ" }).waitFor();
    assert.equal(await cup.getByTestId("event-status").textContent(), "開催中");
    assert.equal(await page.title(), "exhub | イベント");
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok((await overflow()) <= 0, "the list is wider than the phone");
    await shot("list-ja-light-390");

    await page.goto("/eventDetail/trading-cup");
    await page.getByRole("heading", { level: 1, name: "exhub トレーディングカップ" }).waitFor();
    await page.getByTestId("event-body").getByRole("heading", { name: "参加方法" }).waitFor();
    assert.ok((await overflow()) <= 0, "the event page is wider than the phone");
    await shot("detail-ja-light-390");

    await page.goto("/");
    await page.getByTestId("banner-carousel").waitFor();
    assert.equal(await page.getByTestId("banner-slide").count(), 2);
    assert.match(await page.getByTestId("banner-slide").first().getByTestId("banner-caption").textContent(), /トレーディングカップ/);
    assert.ok((await overflow()) <= 0, "the home page is wider than the phone");
    await shot("home-ja-light-390");
  });
});

test("an unknown event shows the not-found state", async () => {
  await withBrowser("missing", {}, async (page, _ctx, shot) => {
    await page.goto("/");
    const api = await getJSON(page, "/api/v1/content/events/no-such-event");
    assert.equal(api.status, 404);
    await page.goto("/eventDetail/no-such-event");
    await page.getByTestId("event-not-found").waitFor();
    await page.getByRole("heading", { name: "Event not found" }).waitFor();
    assert.equal(await page.getByRole("link", { name: "See all events" }).getAttribute("href"), "/event");
    await shot("not-found");
  });
});
