import { afterEach, describe, expect, it, vi } from "vitest";
import { bootScript, detectLocale } from "./preferences";

describe("detectLocale", () => {
  it("prefers the stored choice", () => {
    expect(detectLocale("ja", ["en-US"])).toBe("ja");
    expect(detectLocale("en", ["ja-JP"])).toBe("en");
  });
  it("follows a Japanese browser", () => {
    expect(detectLocale(null, ["ja-JP", "en"])).toBe("ja");
    expect(detectLocale(null, ["JA"])).toBe("ja");
  });
  it("falls back to English, Korean included", () => {
    expect(detectLocale(null, ["ko-KR", "ja"])).toBe("en");
    expect(detectLocale(null, ["ko"])).toBe("en");
    expect(detectLocale(null, [])).toBe("en");
    expect(detectLocale("fr", ["jav"])).toBe("en");
  });
});

describe("bootScript", () => {
  afterEach(() => {
    vi.restoreAllMocks();
    localStorage.clear();
  });

  function boot(languages: string[]) {
    vi.spyOn(navigator, "languages", "get").mockReturnValue(languages);
    document.documentElement.removeAttribute("data-theme");
    document.documentElement.removeAttribute("lang");
    new Function(bootScript)();
    return {
      theme: document.documentElement.getAttribute("data-theme"),
      lang: document.documentElement.getAttribute("lang"),
    };
  }

  it("defaults to the dark theme", () => {
    expect(boot(["en"]).theme).toBe("dark");
    localStorage.setItem("exhub.theme", "bogus");
    expect(boot(["en"]).theme).toBe("dark");
  });

  it("applies the stored light theme", () => {
    localStorage.setItem("exhub.theme", "light");
    expect(boot(["en"]).theme).toBe("light");
  });

  it.each([
    [null, ["ja-JP"]],
    [null, ["ko-KR"]],
    [null, ["en-GB"]],
    ["ja", ["ko"]],
    ["en", ["ja"]],
    ["xx", ["ja"]],
  ] as const)("agrees with detectLocale for stored=%s languages=%j", (stored, languages) => {
    if (stored) localStorage.setItem("exhub.locale", stored);
    expect(boot([...languages]).lang).toBe(detectLocale(stored, languages));
  });
});
