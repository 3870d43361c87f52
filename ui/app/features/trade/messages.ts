import { msg } from "@lingui/core/macro";
import type { I18n, MessageDescriptor } from "@lingui/core";
import type { PlanIssue, PlanIssueCode } from "./order-plan";

// The order form's messages, translated where they are shown. The spec's
// own sentences are kept word for word ("Cannot be less than the minimum
// amount", "The amount exceeds the balance", ...).
const issueMessages: Record<PlanIssueCode, MessageDescriptor> = {
  "price.required": msg`Enter a price.`,
  "price.tick": msg`The price must be a multiple of {limit}.`,
  "price.min": msg`The price cannot be lower than {limit}.`,
  "price.max": msg`The price cannot be higher than {limit}.`,
  "qty.required": msg`Enter a size.`,
  "qty.step": msg`The size must be a multiple of {limit}.`,
  "qty.min": msg`Cannot be less than the minimum amount`,
  "qty.max": msg`The size cannot be more than {limit}.`,
  "qty.balance": msg`The amount exceeds the balance`,
  "notional.min": msg`The order value must be at least {limit}.`,
  "trigger.required": msg`Enter a trigger price.`,
  "trigger.tick": msg`The trigger price must be a multiple of {limit}.`,
  "trigger.positive": msg`The trigger price must be greater than zero.`,
  "ai.unavailable": msg`No best price yet: wait for the order book.`,
  "price.unavailable": msg`No price yet to convert the amount: enter a price or wait for the order book.`,
  "max.unknown": msg`The largest order size is not known yet.`,
  "tpsl.value": msg`Enter a value that gives a trigger price.`,
  "tpsl.both": msg`This exchange takes a take-profit and a stop-loss together: enter both.`,
  "tp.above": msg`The take-profit price must be greater than the order price.`,
  "tp.below": msg`The take-profit price must be lower than the order price.`,
  "sl.above": msg`The stop-loss price must be greater than the order price.`,
  "sl.below": msg`The stop-loss price must be lower than the order price.`,
};

export function issueText(i18n: I18n, issue: PlanIssue): string {
  const d = issueMessages[issue.code];
  return i18n._(d.id, { limit: issue.limit ?? "" }, { message: d.message });
}

// The spec's messages for the outcome of a write.
export const outcome = {
  placed: msg`Order successfully`,
  failed: msg`Order failed`,
  cancelled: msg`Order Cancelled`,
  pending: msg`Order sent: waiting for the exchange to confirm it.`,
  cancelPending: msg`Cancellation sent: the exchange has not confirmed it yet. Open orders are being checked.`,
  insufficient: msg`Your available balance is insufficient.`,
  setting: msg`Setting successful!`,
  modified: msg`Modified successfully!`,
  unknown: msg`We could not confirm this order. Check Open orders before you submit it again.`,
};

// Problem codes of the trading API with a sentence of our own; the rest show
// the API's detail.
const codeMessages: Record<string, MessageDescriptor> = {
  insufficient_funds: msg`Your available balance is insufficient.`,
  position_mode_mismatch: msg`Your account is in hedge mode: choose Open Long/Short or Close Long/Short (or switch the position mode).`,
  no_account: msg`You have no account on this exchange yet.`,
  rate_limited: msg`Too many requests: please try again in a moment.`,
  order_not_found: msg`This order no longer exists.`,
  order_not_open: msg`This order is no longer open.`,
  order_pending: msg`This order is still being confirmed: try again in a moment.`,
  precision: msg`The price or size does not fit the instrument's grid.`,
  min_size: msg`Cannot be less than the minimum amount`,
  min_notional: msg`The order value is below the exchange's minimum.`,
  two_factor_required: msg`Trading on this exchange needs two-factor authentication: turn on Google Authenticator under Security.`,
  kyc_required: msg`Trading on this exchange needs a verified identity: complete KYC first.`,
};

export function codeText(i18n: I18n, code: string | undefined): string | undefined {
  const m = code ? codeMessages[code] : undefined;
  return m ? i18n._(m) : undefined;
}
