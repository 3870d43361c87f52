import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { createRoutesStub, MemoryRouter, Outlet } from "react-router";
import { describe, expect, it, vi } from "vitest";
import { setApiFetch } from "~/api/client";
import { activateLocale } from "~/i18n";
import { AppProviders } from "~/providers";
import { fakeApi, jsonResponse } from "~/test/fixtures";
import { AnnouncementStrip } from "./Announcements";
import { BannerCarousel } from "./Banners";
import EventDetailPage from "./EventDetailPage";
import EventsPage from "./EventsPage";
import { Markdown, parseBlocks } from "./Markdown";

function event(id: string, lang: "en" | "ja", title: string, status = "ongoing", extra: object = {}) {
  return {
    id,
    lang,
    title,
    summary: `${title} summary`,
    image_url: `/content/${id}.svg`,
    starts_at: "2026-11-20T00:00:00Z",
    ends_at: "2026-12-20T00:00:00Z",
    status,
    ...extra,
  };
}

const banners = (lang: string) => ({
  page: 1,
  page_size: 2,
  total: 2,
  list: [
    { id: "b1", lang, place: "home", title: `First ${lang}`, image_url: "/content/banner-cup.svg", link: "/eventDetail/cup" },
    { id: "b2", lang, place: "home", title: `Second ${lang}`, image_url: "/content/banner-markets.svg", link: "https://help.example.org/x" },
  ],
});

function contentApi() {
  return fakeApi({
    "/api/v1/content/events": (u) => {
      const lang = u.searchParams.get("lang") as "en" | "ja";
      const page = Number(u.searchParams.get("page"));
      const all = Array.from({ length: 11 }, (_, i) =>
        event(`e${i}`, lang, lang === "ja" ? `イベント${i}` : `Event ${i}`),
      );
      const size = Number(u.searchParams.get("page_size"));
      return jsonResponse({ page, page_size: size, total: all.length, list: all.slice((page - 1) * size, page * size) });
    },
    "/api/v1/content/events/cup": (u) =>
      jsonResponse({
        ...event("cup", u.searchParams.get("lang") === "ja" ? "ja" : "en", u.searchParams.get("lang") === "ja" ? "カップ" : "The Cup"),
        body: "## Rules\n\nTrade **a lot**.\n\n- one\n- two\n\n<img src=x onerror=alert(1)> [bad](javascript:alert(1)) [help](https://help.example.org/r)",
      }),
    "/api/v1/content/banners": (u) => jsonResponse(banners(u.searchParams.get("lang") ?? "en")),
    "/api/v1/content/announcements": (u) =>
      jsonResponse({
        list: [
          { id: "a1", lang: u.searchParams.get("lang"), title: "Maintenance", link: "https://help.example.org/m", published_at: "2026-11-24T00:00:00Z" },
        ],
      }),
  });
}

function renderAt(path: string) {
  const Stub = createRoutesStub([
    {
      path: "/",
      Component: () => (
        <AppProviders>
          <Outlet />
        </AppProviders>
      ),
      children: [
        { path: "event", Component: EventsPage },
        { path: "eventDetail/:eventId", Component: EventDetailPage },
        {
          path: "home",
          Component: () => (
            <>
              <BannerCarousel delayMs={50} />
              <AnnouncementStrip />
            </>
          ),
        },
      ],
    },
  ]);
  return render(<Stub initialEntries={[path]} />);
}

describe("event body", () => {
  it("renders the Markdown subset as elements and never markup", () => {
    expect(parseBlocks("# T\n\npara\nline\n\n- a\n- b\n1. c").map((b) => b.kind)).toEqual(["h", "p", "ul", "ol"]);
    const { container } = render(
      <MemoryRouter>
        <Markdown source={"## Hi\n\n<script>window.__x=1</script> **bold** *it* [ok](/event) [js](javascript:alert(1))"} />
      </MemoryRouter>,
    );
    expect(container.querySelector("h3")?.textContent).toBe("Hi");
    expect(container.querySelector("script")).toBeNull();
    expect(container.textContent).toContain("<script>window.__x=1</script>");
    expect(container.querySelector("strong")?.textContent).toBe("bold");
    expect(container.querySelector("em")?.textContent).toBe("it");
    const links = [...container.querySelectorAll("a")].map((a) => a.getAttribute("href"));
    expect(links).toEqual(["/event"]);
    expect(container.textContent).toContain("js");
  });
});

describe("events page", () => {
  it("lists events with pages in the URL and the page's language", async () => {
    const api = contentApi();
    setApiFetch(api.fetch);
    renderAt("/event");
    expect(await screen.findByRole("heading", { name: "Event 0" }, { timeout: 10_000 })).toBeTruthy();
    expect(screen.getAllByTestId("event-card")).toHaveLength(9);
    expect(screen.getByText("Page 1 of 2")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Next" }));
    expect(await screen.findByRole("heading", { name: "Event 9" })).toBeTruthy();
    expect(screen.getAllByTestId("event-card")).toHaveLength(2);
    expect(api.calls).toContain("GET /api/v1/content/events?lang=en&status=current&page=2&page_size=9");
    expect(screen.getByRole("link", { name: /Event 10/ }).getAttribute("href")).toBe("/eventDetail/e10");

    fireEvent.click(screen.getByRole("button", { name: "Ended" }));
    await waitFor(() => expect(api.calls).toContain("GET /api/v1/content/events?lang=en&status=ended&page=1&page_size=9"));

    await act(() => activateLocale("ja"));
    expect(await screen.findByRole("heading", { name: "イベント0" })).toBeTruthy();
    expect(document.title).toBe("exhub | イベント");
  });

  it("shows an event's body safely, and the not-found state", async () => {
    setApiFetch(contentApi().fetch);
    const { container } = renderAt("/eventDetail/cup");
    expect(await screen.findByRole("heading", { name: "The Cup", level: 1 }, { timeout: 10_000 })).toBeTruthy();
    expect(document.title).toBe("exhub | The Cup");
    const body = screen.getByTestId("event-body");
    expect(within(body).getByRole("heading", { name: "Rules" })).toBeTruthy();
    expect(container.querySelector(".content-body img")).toBeNull();
    expect(within(body).queryByRole("link", { name: "bad" })).toBeNull();
    expect(within(body).getByRole("link", { name: "help" }).getAttribute("target")).toBe("_blank");
    expect(screen.getByTestId("event-status").textContent).toBe("Ongoing");

    cleanupAndRender("/eventDetail/nothing-here");
    expect(await screen.findByTestId("event-not-found")).toBeTruthy();
    expect(screen.getByRole("heading", { name: "Event not found" })).toBeTruthy();
    expect(screen.getByRole("link", { name: "See all events" }).getAttribute("href")).toBe("/event");
  });
});

function cleanupAndRender(path: string) {
  document.body.innerHTML = "";
  renderAt(path);
}

describe("home banners and announcements", () => {
  it("rotates two banners, pauses on hover, focus and the Pause button, and links out", async () => {
    setApiFetch(contentApi().fetch);
    renderAt("/home");
    const carousel = await screen.findByTestId("banner-carousel", {}, { timeout: 10_000 });
    const slides = () => screen.getAllByTestId("banner-slide");
    expect(slides()).toHaveLength(2);
    expect(within(carousel).getByRole("link", { name: "First en" }).getAttribute("href")).toBe("/eventDetail/cup");
    expect(slides()[0]!.hidden).toBe(false);
    // Autoplay moves to the second banner, then back.
    await waitFor(() => expect(slides()[1]!.hidden).toBe(false));
    fireEvent.mouseEnter(carousel);
    expect(carousel.dataset.paused).toBe("true");
    fireEvent.mouseLeave(carousel);
    fireEvent.click(screen.getByTestId("banner-pause"));
    expect(carousel.dataset.paused).toBe("true");
    expect(screen.getByTestId("banner-pause").textContent).toBe("Play");
    fireEvent.click(screen.getByRole("button", { name: "Show banner 1" }));
    expect(slides()[0]!.hidden).toBe(false);
    expect(within(slides()[0]!).getByRole("link").getAttribute("href")).toBe("/eventDetail/cup");
    expect(within(slides()[1]!).getByRole("link", { hidden: true }).getAttribute("target")).toBe("_blank");

    const ann = screen.getByTestId("announcements");
    const link = within(ann).getByRole("link", { name: /Maintenance/ });
    expect(link.getAttribute("href")).toBe("https://help.example.org/m");
    expect(link.getAttribute("rel")).toContain("noopener");
  });

  it("stays still for users who ask for reduced motion", async () => {
    vi.stubGlobal(
      "matchMedia",
      vi.fn((q: string) => ({ matches: q.includes("reduce"), media: q, addEventListener() {}, removeEventListener() {} })),
    );
    try {
      setApiFetch(contentApi().fetch);
      renderAt("/home");
      const carousel = await screen.findByTestId("banner-carousel", {}, { timeout: 10_000 });
      expect(carousel.dataset.paused).toBe("true");
      expect(screen.queryByTestId("banner-pause")).toBeNull();
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
