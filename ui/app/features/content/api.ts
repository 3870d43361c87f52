import { useLingui } from "@lingui/react/macro";
import type { components } from "~/api/schema";
import { queryOptionsFor } from "~/api/queries";

// The public content routes (GET /api/v1/content/*): events, banners and
// announcements in the page's language (the BFF falls back to English per
// item). Answers are public and edge-cached, so the language is a query
// parameter.

export type ContentEvent = components["schemas"]["ContentEvent"];
export type ContentEventDetail = components["schemas"]["ContentEventDetail"];
export type ContentBanner = components["schemas"]["ContentBanner"];
export type ContentAnnouncement = components["schemas"]["ContentAnnouncement"];
export type ContentLang = "en" | "ja";
export type EventWindow = "current" | "ended" | "all";

// Events per page on /event; the home carousel shows HOME_BANNERS banners
// (the product's GetBanner: page 1, pageSize 2).
export const EVENTS_PAGE_SIZE = 9;
export const HOME_BANNERS = 2;

const STALE = 60_000;

export function contentLang(locale: string): ContentLang {
  return locale.toLowerCase().startsWith("ja") ? "ja" : "en";
}

export function useContentLang(): ContentLang {
  const { i18n } = useLingui();
  return contentLang(i18n.locale);
}

export const contentQueries = {
  events: (lang: ContentLang, status: EventWindow, page: number, pageSize = EVENTS_PAGE_SIZE) =>
    queryOptionsFor(
      "get",
      "/api/v1/content/events",
      { params: { query: { lang, status, page, page_size: pageSize } } },
      { staleTime: STALE },
    ),
  event: (id: string, lang: ContentLang) =>
    queryOptionsFor(
      "get",
      "/api/v1/content/events/{id}",
      { params: { path: { id }, query: { lang } } },
      // A missing event stays missing: no retry of a 404.
      { staleTime: STALE },
    ),
  banners: (place: "home" | "events", lang: ContentLang, page = 1, pageSize = HOME_BANNERS) =>
    queryOptionsFor(
      "get",
      "/api/v1/content/banners",
      { params: { query: { place, lang, page, page_size: pageSize } } },
      { staleTime: STALE },
    ),
  announcements: (lang: ContentLang, limit = 3) =>
    queryOptionsFor("get", "/api/v1/content/announcements", { params: { query: { lang, limit } } }, { staleTime: STALE }),
};

// A link that stays in the app ("/event") or leaves it (https URL).
export function isInternal(link: string): boolean {
  return link.startsWith("/") && !link.startsWith("//");
}

// Only same-origin paths and https URLs are followed; anything else (a
// javascript: URL slipped into a body) is shown as text.
export function safeHref(link: string): string | null {
  if (isInternal(link)) return link;
  try {
    const u = new URL(link);
    return u.protocol === "https:" || u.protocol === "http:" || u.protocol === "mailto:" ? u.href : null;
  } catch {
    return null;
  }
}
