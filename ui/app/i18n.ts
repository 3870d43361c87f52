import { i18n, type Messages } from "@lingui/core";
import { messages as enMessages } from "./locales/en/messages.po";
import {
  browserLanguages,
  DEFAULT_LOCALE,
  detectLocale,
  isLocale,
  LOCALE_KEY,
  noteChoice,
  readStored,
  writeStored,
  type Locale,
} from "./preferences";

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

// The language last asked for: the page shows it once its catalog is loaded.
// Of two switches in flight the later one wins, whichever catalog loads first.
let requested: Locale | null = null;

export function requestedLocale(): Locale {
  return requested ?? (isLocale(i18n.locale) ? i18n.locale : DEFAULT_LOCALE);
}

export async function activateLocale(locale: Locale): Promise<void> {
  requested = locale;
  if (!loaded.has(locale)) {
    const { messages } = await loaders[locale]();
    i18n.load(locale, messages);
    loaded.add(locale);
  }
  if (requested !== locale) return;
  i18n.activate(locale);
  if (typeof document !== "undefined") document.documentElement.lang = locale;
}

// Switches the language for this page and remembers it, without counting as
// the visitor's own choice (stored preferences being applied).
export async function applyLocale(locale: Locale): Promise<void> {
  await activateLocale(locale);
  if (requested === locale) writeStored(LOCALE_KEY, locale);
}

// The visitor's own choice of language (the language menu).
export async function changeLocale(locale: Locale): Promise<void> {
  noteChoice("language");
  await applyLocale(locale);
}

export { i18n };
