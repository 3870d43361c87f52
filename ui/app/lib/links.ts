import type { Locale } from "~/preferences";

// External pages of the product. Each is set at build time with a
// VITE_EXHUB_*_URL variable (see ui/README.md). Pages the project itself has
// default to its public home (the repository: read-me, docs, releases,
// issues); the community accounts default to the project's handles. Pages a
// deployment must supply itself (terms of use, privacy policy) have no
// default: until set, the footer shows them as "not configured" instead of a
// link that leads nowhere.
const env = import.meta.env as Record<string, string | undefined>;

function setting(name: string): string | null {
  const v = env[name]?.trim();
  return v ? v : null;
}

const home = setting("VITE_EXHUB_HOME_URL") ?? "https://github.com/exhub/exhub";

export const links = {
  home,
  helpCenter: setting("VITE_EXHUB_HELP_URL") ?? `${home}/tree/main/docs`,
  announcement: setting("VITE_EXHUB_ANNOUNCEMENT_URL") ?? `${home}/releases`,
  about: setting("VITE_EXHUB_ABOUT_URL") ?? `${home}#readme`,
  contact: setting("VITE_EXHUB_CONTACT_URL") ?? `${home}/issues`,
  terms: setting("VITE_EXHUB_TERMS_URL"),
  privacy: setting("VITE_EXHUB_PRIVACY_URL"),
  telegram: setting("VITE_EXHUB_TELEGRAM_URL") ?? "https://t.me/exhub",
  youtube: setting("VITE_EXHUB_YOUTUBE_URL") ?? "https://www.youtube.com/@exhub",
  discord: setting("VITE_EXHUB_DISCORD_URL") ?? "https://discord.gg/exhub",
  x: setting("VITE_EXHUB_X_URL") ?? "https://x.com/exhub",
  xJapan: setting("VITE_EXHUB_X_JA_URL") ?? "https://x.com/exhub_jp",
};

// The build variable behind each optional link, named in the "not
// configured" note.
export const linkSettings = {
  terms: "VITE_EXHUB_TERMS_URL",
  privacy: "VITE_EXHUB_PRIVACY_URL",
} as const;

// The X account differs for Japanese: the Japanese interface or a user
// flagged as Japanese gets the Japanese account.
export function xLink(locale: Locale | string, userIsJapanese: boolean): string {
  return locale === "ja" || userIsJapanese ? links.xJapan : links.x;
}
