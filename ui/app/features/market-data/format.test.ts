import { describe, expect, it } from "vitest";
import { formatAxisTime, formatDecimal, formatPercent, formatTime, MISSING } from "./format";

describe("market data formatting", () => {
  it("formats decimal strings exactly in the user's locale", () => {
    // More digits than a float holds: the string is formatted, not a number.
    expect(formatDecimal("123456789012345678.12", "en", 2)).toBe("123,456,789,012,345,678.12");
    expect(formatDecimal("20634667.2182", "en", 2)).toBe("20,634,667.22");
    expect(formatDecimal("20634667.2182", "ja", 2)).toBe("20,634,667.22");
    expect(formatDecimal("1234.5", "de", 2)).toBe("1.234,5");
    expect(formatDecimal("0.1", "en", 4, 2)).toBe("0.10");
    // 0.125 rounds half away from zero (a float would make it 0.12 at times).
    expect(formatDecimal("0.125", "en", 2)).toBe("0.13");
    expect(formatDecimal("-0.125", "en", 2)).toBe("-0.13");
    expect(formatDecimal("", "en")).toBe(MISSING);
    expect(formatDecimal("abc", "en")).toBe(MISSING);
  });

  it("shows fractions as percents with four to six decimals", () => {
    expect(formatPercent("0.0001", "en")).toBe("0.0100%");
    expect(formatPercent("0.0000522", "en")).toBe("0.00522%");
    expect(formatPercent("-0.00012345678", "en")).toBe("-0.012346%");
    expect(formatPercent("0.6068", "ja", 2, 2)).toBe("60.68%");
    expect(formatPercent("", "en")).toBe(MISSING);
  });

  it("formats period starts for the period's scale", () => {
    const t = Date.UTC(2026, 10, 20, 8, 5);
    expect(formatTime(t, "en", "1h", "UTC")).toBe("Nov 20, 2026, 8:05 AM");
    expect(formatTime(t, "ja", "1h", "UTC")).toBe("2026/11/20 8:05");
    expect(formatTime(Date.UTC(2026, 10, 20), "en", "1d", "UTC")).toBe("Nov 20, 2026");
    expect(formatAxisTime(t, "en", "5m", "UTC")).toBe("08:05 AM");
    expect(formatAxisTime(t, "ja", "4h", "UTC")).toBe("11/20");
  });
});
