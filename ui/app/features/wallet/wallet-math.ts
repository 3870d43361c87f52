import { msg } from "@lingui/core/macro";
import type { I18n, MessageDescriptor } from "@lingui/core";
import { addDecimals, compareDecimal, dec, decimalString, isDecimal, subDecimals } from "~/lib/decimal";
import type { CoinBalance } from "./api";

// The wallet's pure rules: amounts checked exactly against a coin's precision, minimum and balance (decimal
// strings, never floating point), small balances, coin ordering and the sub-page choice.

export const SUB_PAGES = ["overview", "deposit", "withdraw", "convert", "transfer", "exchange", "gift"] as const;
export type SubPage = (typeof SUB_PAGES)[number];

export function isSubPage(v: unknown): v is SubPage {
  return typeof v === "string" && (SUB_PAGES as readonly string[]).includes(v);
}

// The sub-page to show: ?page= when it names one, else the remembered one, else the overview.
export function chooseSubPage(param: string | null, remembered: string | null | undefined): SubPage {
  if (isSubPage(param)) return param;
  if (isSubPage(remembered)) return remembered;
  return "overview";
}

// Amount problems as message codes (translated where shown: amountText). The three balance and minimum messages are
// the spec's own.
export const amountMessages = {
  "amount.required": msg`Enter an amount.`,
  "amount.invalid": msg`Enter a number such as 12.5.`,
  "amount.positive": msg`The amount must be more than zero.`,
  "amount.min": msg`Cannot be less than the minimum amount`,
  "amount.max": msg`The amount is above the maximum of this network.`,
  "amount.exceeds": msg`The amount exceeds the balance`,
  "amount.fees": msg`Your balance insufficient to cover withdrawal amount and fees.`,
} satisfies Record<string, MessageDescriptor>;

export type AmountCode = keyof typeof amountMessages | `amount.precision:${number}`;

// The text of an amount code in the page's language; anything else (a server's sentence) as it is.
export function amountText(i18n: I18n, code: string | undefined): string {
  if (!code) return "";
  const p = /^amount\.precision:(\d+)$/.exec(code);
  if (p) {
    const n = Number(p[1]);
    return n === 0
      ? i18n._(msg`Enter a whole number.`)
      : i18n._(msg`At most ${n} decimal places.`);
  }
  if (Object.prototype.hasOwnProperty.call(amountMessages, code)) return i18n._(amountMessages[code as keyof typeof amountMessages]);
  return code;
}

// Digits with an optional point; no sign, no exponent.
const AMOUNT = /^(?:\d+\.?\d*|\.\d+)$/;

// Decimals that carry a digit ("1.2500" has 2).
export function decimalPlaces(s: string): number {
  const i = s.indexOf(".");
  if (i < 0) return 0;
  return s.slice(i + 1).replace(/0+$/, "").length;
}

export type AmountRules = {
  precision: number;
  min?: string;
  max?: string;
  // What may be spent: the amount may not exceed it.
  available?: string;
  // Charged on top of the amount (withdrawals): amount + fee must fit in available.
  fee?: string;
};

// The first problem of an amount, or null when it is fine.
export function amountProblem(value: string, r: AmountRules): AmountCode | null {
  const v = value.trim();
  if (v === "") return "amount.required";
  if (!AMOUNT.test(v)) return "amount.invalid";
  if (decimalPlaces(v) > r.precision) return `amount.precision:${r.precision}`;
  if (compareDecimal(v, "0") <= 0) return "amount.positive";
  if (isDecimal(r.min) && compareDecimal(v, r.min) < 0) return "amount.min";
  if (isDecimal(r.max) && compareDecimal(r.max, "0") > 0 && compareDecimal(v, r.max) > 0) return "amount.max";
  if (isDecimal(r.available)) {
    if (compareDecimal(v, r.available) > 0) return "amount.exceeds";
    if (isDecimal(r.fee) && compareDecimal(decimalString(addDecimals(v, r.fee)), r.available) > 0) return "amount.fees";
  }
  return null;
}

// Balances worth less than this many USDT count as small.
export const SMALL_USDT = "1";

// Whether a coin is a small balance: its USDT value is below SMALL_USDT. A coin without a price is never hidden.
export function isSmall(c: CoinBalance): boolean {
  return isDecimal(c.usdt_value) && compareDecimal(c.usdt_value, SMALL_USDT) < 0;
}

// Coins in picker order: the member's recent coins first (newest first, only those offered), then the rest by name.
export function orderCoins(coins: string[], recent: string[]): string[] {
  const offered = new Set(coins);
  const head = recent.filter((c) => offered.has(c));
  const seen = new Set(head);
  return [...head, ...[...coins].filter((c) => !seen.has(c)).sort()];
}

// The largest amount that fits: available minus the fee (never negative), cut to the precision.
export function maxAmount(available: string | undefined, fee: string | undefined, precision: number): string {
  if (!isDecimal(available)) return "";
  const rest = isDecimal(fee) ? subDecimals(available, fee) : dec(available);
  if (rest.lte(0)) return "0";
  return decimalString(rest.round(precision, 0));
}
