import { setupI18n } from "@lingui/core";
import { describe, expect, it } from "vitest";
import { amountProblem, amountText, chooseSubPage, decimalPlaces, isSmall, maxAmount, orderCoins } from "./wallet-math";

describe("amounts", () => {
  it("counts the decimals that carry a digit", () => {
    expect(decimalPlaces("1")).toBe(0);
    expect(decimalPlaces("1.")).toBe(0);
    expect(decimalPlaces("1.2500")).toBe(2);
    expect(decimalPlaces(".00000001")).toBe(8);
  });

  it("checks the shape and the coin's precision", () => {
    expect(amountProblem("", { precision: 8 })).toBe("amount.required");
    expect(amountProblem("  ", { precision: 8 })).toBe("amount.required");
    expect(amountProblem("1e3", { precision: 8 })).toBe("amount.invalid");
    expect(amountProblem("-1", { precision: 8 })).toBe("amount.invalid");
    expect(amountProblem("1,5", { precision: 8 })).toBe("amount.invalid");
    expect(amountProblem("0.123456789", { precision: 8 })).toBe("amount.precision:8");
    expect(amountProblem("0.12345678", { precision: 8 })).toBeNull();
    expect(amountProblem("1.50", { precision: 1 })).toBeNull(); // trailing zeros carry nothing
    expect(amountProblem("1.5", { precision: 0 })).toBe("amount.precision:0");
    expect(amountProblem("0", { precision: 8 })).toBe("amount.positive");
    expect(amountProblem("0.000", { precision: 8 })).toBe("amount.positive");
  });

  it("applies the minimum, the maximum, the balance and the fee exactly", () => {
    const r = { precision: 8, min: "10", max: "1000000", available: "100.1", fee: "0.1" };
    expect(amountProblem("9.99999999", r)).toBe("amount.min");
    expect(amountProblem("10", r)).toBeNull();
    expect(amountProblem("100", r)).toBeNull(); // 100 + 0.1 fee = 100.1: exactly the balance
    expect(amountProblem("100.00000001", r)).toBe("amount.fees");
    expect(amountProblem("100.2", r)).toBe("amount.exceeds");
    expect(amountProblem("2000000", { ...r, available: "99999999" })).toBe("amount.max");
    // A balance of 0.3 takes 0.1 + 0.2 (no binary floating point).
    expect(amountProblem("0.2", { precision: 8, available: "0.3", fee: "0.1" })).toBeNull();
  });

  it("says the spec's messages", () => {
    const i18n = setupI18n({ locale: "en", messages: { en: {} } });
    expect(amountText(i18n, "amount.min")).toBe("Cannot be less than the minimum amount");
    expect(amountText(i18n, "amount.exceeds")).toBe("The amount exceeds the balance");
    expect(amountText(i18n, "amount.fees")).toBe("Your balance insufficient to cover withdrawal amount and fees.");
    expect(amountText(i18n, "amount.precision:2")).toBe("At most 2 decimal places.");
    expect(amountText(i18n, "a server sentence")).toBe("a server sentence");
  });

  it("computes the largest amount after the fee, cut to the precision", () => {
    expect(maxAmount("100.123456789", "1", 8)).toBe("99.12345678");
    expect(maxAmount("0.5", "1", 8)).toBe("0");
    expect(maxAmount("12.5", undefined, 0)).toBe("12");
    expect(maxAmount(undefined, "1", 8)).toBe("");
  });
});

describe("coins and sub-pages", () => {
  it("puts recent coins first, newest first, then the rest by name", () => {
    expect(orderCoins(["USDT", "BTC", "ETH", "SOL"], ["SOL", "XRP", "BTC"])).toEqual(["SOL", "BTC", "ETH", "USDT"]);
    expect(orderCoins(["B", "A"], [])).toEqual(["A", "B"]);
  });

  it("hides balances under 1 USDT, never an unpriced one", () => {
    const c = { coin: "X", available: "1", frozen: "0", total: "1" };
    expect(isSmall({ ...c, usdt_price: "0.5", usdt_value: "0.99999999" })).toBe(true);
    expect(isSmall({ ...c, usdt_price: "1", usdt_value: "1" })).toBe(false);
    expect(isSmall({ ...c, usdt_price: "", usdt_value: "" })).toBe(false);
  });

  it("chooses the sub-page from ?page=, else the remembered one", () => {
    expect(chooseSubPage("deposit", "gift")).toBe("deposit");
    expect(chooseSubPage(null, "gift")).toBe("gift");
    expect(chooseSubPage("nope", "nope")).toBe("overview");
  });
});
