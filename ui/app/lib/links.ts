import type { Locale } from "~/preferences";

// External pages of the product (help center, legal pages, community).
// Each can be set at build time with a VITE_EXHUB_* variable; the defaults
// point at the project's public home.
const env = import.meta.env as Record<string, string | undefined>;
const home = env.VITE_EXHUB_HOME_URL ?? "https://github.com/exhub/exhub";

export const links = {
  helpCenter: env.VITE_EXHUB_HELP_URL ?? `${home}/wiki`,
  announcement: env.VITE_EXHUB_ANNOUNCEMENT_URL ?? `${home}/releases`,
  about: env.VITE_EXHUB_ABOUT_URL ?? `${home}#readme`,
  terms: env.VITE_EXHUB_TERMS_URL ?? `${home}/blob/main/LICENSE`,
  privacy: env.VITE_EXHUB_PRIVACY_URL ?? `${home}/blob/main/docs/privacy.md`,
  contact: env.VITE_EXHUB_CONTACT_URL ?? `${home}/issues`,
  telegram: env.VITE_EXHUB_TELEGRAM_URL ?? "https://t.me/exhub",
  youtube: env.VITE_EXHUB_YOUTUBE_URL ?? "https://www.youtube.com/@exhub",
  discord: env.VITE_EXHUB_DISCORD_URL ?? "https://discord.gg/exhub",
  x: env.VITE_EXHUB_X_URL ?? "https://x.com/exhub",
  xJapan: env.VITE_EXHUB_X_JA_URL ?? "https://x.com/exhub_jp",
};

// The X account differs for Japanese: the Japanese interface or a user
// flagged as Japanese gets the Japanese account.
export function xLink(locale: Locale | string, userIsJapanese: boolean): string {
  return locale === "ja" || userIsJapanese ? links.xJapan : links.x;
}
