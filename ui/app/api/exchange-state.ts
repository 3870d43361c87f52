import type { Exchange } from "./client";

// What the UI shows for an exchange, from the configured status and the
// state of its plugin process.
export type DisplayState = "available" | "coming_soon" | "maintenance" | "starting" | "unavailable";

export function displayState(ex: Pick<Exchange, "status" | "pluginState">): DisplayState {
  const status: string = ex.status;
  const plugin: string = ex.pluginState;
  if (status === "coming_soon") return "coming_soon";
  if (status === "maintenance") return "maintenance";
  if (status !== "available") return "unavailable";
  if (plugin === "running") return "available";
  if (plugin === "starting" || plugin === "restarting") return "starting";
  return "unavailable";
}

// Market types map to the two trading areas of the app.
export type Area = "spot" | "futures";

export function areaOf(marketType: string): Area | null {
  switch (marketType) {
    case "SPOT":
      return "spot";
    case "SWAP":
      return "futures";
    default:
      return null;
  }
}

// Renders an SVG document as an image source. An <img> never runs scripts
// from its SVG, unlike markup inserted into the page.
export function logoSrc(svg: string): string | null {
  const trimmed = svg.trim();
  if (!trimmed.startsWith("<")) return null;
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(trimmed)}`;
}

// Only plain web links are followed.
export function safeWebsite(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}
