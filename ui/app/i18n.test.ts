import { describe, expect, it } from "vitest";
import { changeLocale, i18n, requestedLocale } from "./i18n";
import { choiceCounts, LOCALE_KEY } from "./preferences";

describe("switching the language", () => {
  it("lets the later of two switches win though the earlier one's catalog loads last", async () => {
    // Japanese is not loaded yet in this module: its catalog arrives after
    // English (bundled) is already active again.
    const ja = changeLocale("ja");
    const en = changeLocale("en");
    await Promise.all([ja, en]);
    expect(i18n.locale).toBe("en");
    expect(requestedLocale()).toBe("en");
    expect(document.documentElement.lang).toBe("en");
    expect(window.localStorage.getItem(LOCALE_KEY)).toBe("en");
  });

  it("counts each switch from the language menu as the visitor's choice", async () => {
    const before = choiceCounts().language;
    await changeLocale("ja");
    expect(i18n.locale).toBe("ja");
    expect(choiceCounts().language).toBe(before + 1);
    await changeLocale("en");
  });
});
