// Country calling codes offered by PhoneField (sign-up, binding a mobile
// number), E.164 without the "+". A short static list; the name is shown
// translated by Intl.
export type Country = { iso: string; dial: string };

export const COUNTRIES: readonly Country[] = [
  { iso: "JP", dial: "81" },
  { iso: "US", dial: "1" },
  { iso: "GB", dial: "44" },
  { iso: "SG", dial: "65" },
  { iso: "HK", dial: "852" },
  { iso: "TW", dial: "886" },
  { iso: "AU", dial: "61" },
  { iso: "CA", dial: "1" },
  { iso: "DE", dial: "49" },
  { iso: "FR", dial: "33" },
  { iso: "IN", dial: "91" },
  { iso: "ID", dial: "62" },
  { iso: "MY", dial: "60" },
  { iso: "PH", dial: "63" },
  { iso: "TH", dial: "66" },
  { iso: "VN", dial: "84" },
  { iso: "TR", dial: "90" },
  { iso: "AE", dial: "971" },
  { iso: "BR", dial: "55" },
  { iso: "NG", dial: "234" },
];

export function countryName(iso: string, locale: string): string {
  try {
    return new Intl.DisplayNames([locale], { type: "region" }).of(iso) ?? iso;
  } catch {
    return iso;
  }
}

// +<dial><national number without leading zeros or separators>.
export function toE164(dial: string, national: string): string {
  const digits = national.replace(/[^\d]/g, "").replace(/^0+/, "");
  return `+${dial}${digits}`;
}

// Whether the quick-register value looks like a phone number rather than an e-mail address.
export function looksLikePhone(v: string): boolean {
  return !v.includes("@") && /^\+?[\d\s()-]{5,}$/.test(v.trim());
}
