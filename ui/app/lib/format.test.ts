import { describe, expect, it } from "vitest";
import { formatChangePct, formatCompact, formatFixed, formatFull, formatStep, MISSING } from "./format";

describe("number formatting", () => {
  it("shows 24h change with two decimals and a sign for every exchange", () => {
    // Binance sends three decimals, OKX's plugin two, some one.
    expect(formatChangePct("-1.234", "en")).toBe("-1.23%");
    expect(formatChangePct("-1.235", "en")).toBe("-1.24%");
    expect(formatChangePct("3.2", "en")).toBe("+3.20%");
    expect(formatChangePct("0.000", "en")).toBe("0.00%");
    expect(formatChangePct("12345.678", "en")).toBe("+12,345.68%");
    expect(formatChangePct("3.2", "ja")).toBe("+3.20%");
    expect(formatChangePct("", "en")).toBe(MISSING);
  });

  it("shows volumes compact with the full value available", () => {
    expect(formatCompact("2490353029.25", "en")).toBe("2.49B");
    expect(formatCompact("2490353029.25", "ja")).toBe("24.9億");
    expect(formatCompact("12345", "en")).toBe("12.3K");
    expect(formatCompact("950.5", "en")).toBe("951");
    expect(formatFull("2490353029.25", "en")).toBe("2,490,353,029.25");
    expect(formatFull("0.000000012345", "en")).toBe("0.000000012345");
    expect(formatCompact(undefined, "en")).toBe(MISSING);
  });

  it("keeps a price on its instrument's tick decimals, exactly", () => {
    expect(formatStep("65000.1", "0.01", "en")).toBe("65,000.10");
    expect(formatStep("65000.129", "0.01", "en")).toBe("65,000.12");
    expect(formatStep("0.00001234", "0.00000001", "en")).toBe("0.00001234");
    expect(formatStep("123456789012345678.5", "0.1", "en")).toBe("123,456,789,012,345,678.5");
    expect(formatStep("3001", "0.1", "ja")).toBe("3,001.0");
    // Without a step the value keeps its own digits (up to 8).
    expect(formatStep("1.50", undefined, "en")).toBe("1.50");
    expect(formatFixed("-0.001", 2, "en")).toBe("0.00");
    expect(formatStep("", "0.1", "en")).toBe(MISSING);
  });
});
