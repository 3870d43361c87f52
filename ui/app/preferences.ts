// Preferences kept in the browser and read before the first paint.

export const THEME_KEY = "exhub.theme";
export const LOCALE_KEY = "exhub.locale";

export const THEMES = ["dark", "light"] as const;
export type Theme = (typeof THEMES)[number];
export const DEFAULT_THEME: Theme = "dark";

export const LOCALES = ["en", "ja"] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = "en";

export function isTheme(v: unknown): v is Theme {
  return v === "dark" || v === "light";
}

export function isLocale(v: unknown): v is Locale {
  return v === "en" || v === "ja";
}

// The stored choice wins; otherwise the browser's first language decides:
// Japanese gets Japanese, everything else (Korean included) gets English.
export function detectLocale(stored: string | null, languages: readonly string[]): Locale {
  if (isLocale(stored)) return stored;
  const first = (languages[0] ?? "").toLowerCase();
  return first === "ja" || first.startsWith("ja-") ? "ja" : DEFAULT_LOCALE;
}

// Choices made in this browser (the language menu, the theme toggle), counted
// per kind. A member's stored preferences arrive some time after sign-in; a
// choice counted after the member was first seen is newer than them and wins.
export type ChoiceCounts = Readonly<{ theme: number; language: number }>;
const choices = { theme: 0, language: 0 };

export function noteChoice(kind: keyof ChoiceCounts): void {
  choices[kind]++;
}

export function choiceCounts(): ChoiceCounts {
  return { ...choices };
}

export function readStored(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function writeStored(key: string, value: string): void {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // Storage can be disabled (private mode, policy); the choice then lasts
    // for this page only.
  }
}

export function browserLanguages(): readonly string[] {
  if (typeof navigator === "undefined") return [];
  if (navigator.languages && navigator.languages.length > 0) return navigator.languages;
  return navigator.language ? [navigator.language] : [];
}

// Runs inline in <head> before the body is parsed so the stored theme and
// language apply on the first paint (no flash of the wrong theme or font).
// It mirrors detectLocale and isTheme; a test checks they agree.
export const bootScript = `(function(){var d=document.documentElement;try{var t=localStorage.getItem(${JSON.stringify(
  THEME_KEY,
)});d.setAttribute("data-theme",t==="light"?"light":"dark");var l=localStorage.getItem(${JSON.stringify(
  LOCALE_KEY,
)});if(l!=="en"&&l!=="ja"){var n=((navigator.languages&&navigator.languages[0])||navigator.language||"").toLowerCase();l=(n==="ja"||n.indexOf("ja-")===0)?"ja":"en"}d.setAttribute("lang",l)}catch(e){d.setAttribute("data-theme","dark")}})();`;
