import { describe, expect, it } from "vitest";
import { areaOf, displayState, logoSrc, safeWebsite } from "./exchange-state";

describe("displayState", () => {
  it.each([
    ["available", "running", "available"],
    ["available", "starting", "starting"],
    ["available", "restarting", "starting"],
    ["available", "failed", "unavailable"],
    ["available", "none", "unavailable"],
    ["coming_soon", "none", "coming_soon"],
    ["coming_soon", "running", "coming_soon"],
    ["maintenance", "running", "maintenance"],
    ["unavailable", "running", "unavailable"],
    ["something-new", "running", "unavailable"],
  ] as const)("status %s with plugin %s shows %s", (status, pluginState, want) => {
    // Unknown values from a newer server must not crash or show as tradable.
    expect(displayState({ status: status as "available", pluginState })).toBe(want);
  });
});

describe("areaOf", () => {
  it("maps market types to app areas", () => {
    expect(areaOf("SPOT")).toBe("spot");
    expect(areaOf("SWAP")).toBe("futures");
    expect(areaOf("OPTION")).toBeNull();
  });
});

describe("logoSrc", () => {
  it("encodes the SVG as a data URL", () => {
    const src = logoSrc(' <svg viewBox="0 0 1 1"><path d="M0 0"/></svg>');
    expect(src).toBe(`data:image/svg+xml;charset=utf-8,${encodeURIComponent('<svg viewBox="0 0 1 1"><path d="M0 0"/></svg>')}`);
    expect(src).not.toContain("<");
  });
  it("rejects what is not markup", () => {
    expect(logoSrc("")).toBeNull();
    expect(logoSrc("javascript:alert(1)")).toBeNull();
  });
});

describe("safeWebsite", () => {
  it("keeps web links only", () => {
    expect(safeWebsite("https://example.com/x")).toBe("https://example.com/x");
    expect(safeWebsite("http://example.com")).toBe("http://example.com/");
    expect(safeWebsite("javascript:alert(1)")).toBeNull();
    expect(safeWebsite("data:text/html,hi")).toBeNull();
    expect(safeWebsite("not a url")).toBeNull();
  });
});
