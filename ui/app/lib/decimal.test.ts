import { describe, expect, it } from "vitest";
import {
  addDecimals,
  compareDecimal,
  compareDecimals,
  dec,
  decimalString,
  fixDecimals,
  fractionToPercent,
  isDecimal,
  isZero,
  scaleStep,
  shiftPoint,
  signOf,
  stepDecimals,
  subDecimals,
} from "./decimal";

describe("decimal", () => {
  it("recognises decimal strings and nothing else", () => {
    for (const s of ["1", "-0.5", ".5", "5.", "+3", " 42 ", "0.000000001"]) expect(isDecimal(s), s).toBe(true);
    for (const s of ["", "-", ".", "1e5", "NaN", "1,000", "abc", undefined, null]) expect(isDecimal(s as string), String(s)).toBe(false);
  });

  it("adds and subtracts exactly where floats do not", () => {
    expect(decimalString(addDecimals("0.1", "0.2"))).toBe("0.3");
    expect(decimalString(subDecimals("65000.1", "64999.9"))).toBe("0.2");
    expect(decimalString(addDecimals("123456789012345678.000001", "0.000009"))).toBe("123456789012345678.00001");
    expect(decimalString(addDecimals("0.00000001", "0"))).toBe("0.00000001");
  });

  it("compares exactly, with text before numbers when sorting", () => {
    expect(compareDecimal("65000.10", "65000.1")).toBe(0);
    expect(compareDecimal("-1", "0")).toBe(-1);
    expect(compareDecimal("10", "9.99999999999999999999")).toBe(1);
    expect(() => compareDecimal("x", "1")).toThrow();
    expect(["2", "", "-1", "10", "—"].sort(compareDecimals)).toEqual(["", "—", "-1", "2", "10"]);
    expect(compareDecimal("-0.0", "0")).toBe(0);
    expect(compareDecimal("+.5", "0.50")).toBe(0);
    expect(compareDecimal("-2.5", "-2.25")).toBe(-1);
    expect(compareDecimal("007.1", "7.01")).toBe(1);
    // Agrees with big.js on a spread of values.
    const vals = ["0", "-0.001", "0.001", "1", "-1", "10.5", "10.05", "-10.5", "999999999999999999.9", ".3", "3."];
    for (const a of vals) for (const b of vals) expect(compareDecimal(a, b), `${a} vs ${b}`).toBe(dec(a).cmp(dec(b)));
  });

  it("fixes the number of decimals by truncating", () => {
    expect(fixDecimals("65000.129", 2)).toBe("65000.12");
    expect(fixDecimals("1.5", 4)).toBe("1.5000");
    expect(fixDecimals("-0.001", 2)).toBe("0.00");
    expect(fixDecimals("-1.239", 2)).toBe("-1.23");
    expect(fixDecimals("n/a", 2)).toBe("n/a");
  });

  it("works with steps and fractions", () => {
    expect(stepDecimals("0.01")).toBe(2);
    expect(stepDecimals("0.0100")).toBe(2);
    expect(stepDecimals("10")).toBe(0);
    expect(stepDecimals("0.00000001")).toBe(8);
    expect(scaleStep("0.01", 2)).toBe("1");
    expect(scaleStep("0.5", 1)).toBe("5");
    expect(fractionToPercent("0.000375")).toBe("0.0375");
    for (const [v, k, want] of [
      ["-1.234", -2, "-0.01234"],
      ["3.2", -2, "0.032"],
      ["12345.678", -2, "123.45678"],
      ["0.000375", 2, "0.0375"],
      ["1", 2, "100"],
      ["-0.00", 3, "0"],
      [".5", 1, "5"],
    ] as const) {
      expect(shiftPoint(v, k), `${v} ${k}`).toBe(want);
      expect(dec(shiftPoint(v, k)).eq(dec(v).times(10 ** k))).toBe(true);
    }
    expect(fractionToPercent("-0.0000001", 4)).toBe("0.0000");
    expect(isZero("0.000")).toBe(true);
    expect(signOf("-0.01")).toBe(-1);
    expect(signOf("0.00")).toBe(0);
    expect(signOf("3")).toBe(1);
    expect(signOf("")).toBe(0);
  });
});
