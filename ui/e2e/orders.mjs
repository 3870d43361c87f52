// What the trading end-to-end tests share: order figures from the exchange's
// own instrument and ticker, and numbers as the trade screen shows them.
import assert from "node:assert/strict";
import { getJSON } from "./session.mjs";

// Digits after the point of a step such as "0.001".
export function decimalsOf(step) {
  const i = step.indexOf(".");
  return i < 0 ? 0 : step.slice(i + 1).replace(/0+$/, "").length;
}

// A resting buy far under the market (and a price ten ticks lower to amend it to), a size worth about twice the
// minimum notional at that price, and a market size worth about twice the minimum notional now, from the exchange's
// instrument and ticker (test arithmetic only: the form and the API do the exact work). type is SPOT or SWAP.
export async function orderFigures(page, { exchange, type, symbol }) {
  const inst = await getJSON(page, `/api/v1/instruments?exchange=${exchange}&type=${type}`);
  assert.equal(inst.status, 200);
  const i = inst.body.instruments.find((x) => x.symbol === symbol);
  assert.ok(i, `${symbol} ${type} on ${exchange}`);
  const tk = await getJSON(page, `/api/v1/tickers?exchange=${exchange}&type=${type}`);
  const last = Number(tk.body.tickers.find((x) => x.symbol === symbol).last);
  assert.ok(last > 0, "a last price");
  const tick = Number(i.tickSize);
  const price = Math.floor((last * 0.8) / tick) * tick;
  const step = Number(i.stepSize);
  const marketStep = Number(i.marketStepSize || i.stepSize);
  const minNotional = Number(i.minNotional || "5");
  const qty = Math.max(Number(i.minQty), Math.ceil((minNotional * 2) / price / step) * step);
  const qtyMarket = Math.max(Number(i.marketMinQty || i.minQty), Math.ceil((minNotional * 2) / last / marketStep) * marketStep);
  return {
    instrument: i,
    last,
    price: price.toFixed(decimalsOf(i.tickSize)),
    amended: (price - 10 * tick).toFixed(decimalsOf(i.tickSize)),
    qty: qty.toFixed(decimalsOf(i.stepSize)),
    qtyMarket: qtyMarket.toFixed(decimalsOf(i.marketStepSize || i.stepSize)),
  };
}

// A decimal string as the trade screen shows it: the integer part grouped for the language, trailing zeros dropped.
export function grouped(s, locale) {
  const [int, frac] = s.split(".");
  const g = Number(int).toLocaleString(locale === "ja" ? "ja-JP" : "en-US");
  return frac && /[1-9]/.test(frac) ? `${g}.${frac.replace(/0+$/, "")}` : g;
}

// Buttons and tabs of the trade screen are pressed with the keyboard (focus, Enter), as a keyboard user does. Pointer
// clicks were lost now and then: when the balance in the order form changes length, the page's height and scroll
// anchoring move the account tables by a line between the pointer's down and up, so the click lands on nothing. A key
// goes to the element itself.
export const press = (locator) => locator.press("Enter");
