import { i18n, type Messages } from "@lingui/core";
import { messages as enMessages } from "./locales/en/messages.po";
import { browserLanguages, detectLocale, LOCALE_KEY, readStored, writeStored, type Locale } from "./preferences";

// English is bundled so that every screen, including error screens, can
// always render; other catalogs load on demand.
i18n.load("en", enMessages);
i18n.activate("en");

const loaders: Record<Locale, () => Promise<{ messages: Messages }>> = {
  en: async () => ({ messages: enMessages }),
  ja: () => import("./locales/ja/messages.po"),
};

const loaded = new Set<Locale>(["en"]);

export const LANGUAGE_NAMES: Record<Locale, string> = {
  en: "English",
  ja: "日本語",
};

export function initialLocale(): Locale {
  return detectLocale(readStored(LOCALE_KEY), browserLanguages());
}

export async function activateLocale(locale: Locale): Promise<void> {
  if (!loaded.has(locale)) {
    const { messages } = await loaders[locale]();
    i18n.load(locale, messages);
    loaded.add(locale);
  }
  i18n.activate(locale);
  if (typeof document !== "undefined") document.documentElement.lang = locale;
}

// Switches the language for this page and remembers it.
export async function changeLocale(locale: Locale): Promise<void> {
  await activateLocale(locale);
  writeStored(LOCALE_KEY, locale);
}

export { i18n };
