import { describe, expect, it } from "vitest";
import { loginPath, safeReturnTo } from "./return-to";

const origin = "http://127.0.0.1:8080";

describe("safeReturnTo", () => {
  it("keeps paths of this site with their query and hash", () => {
    expect(safeReturnTo("/wallet?page=deposit", origin)).toBe("/wallet?page=deposit");
    expect(safeReturnTo("/history#top", origin)).toBe("/history#top");
    expect(safeReturnTo(`${origin}/dashboard`, origin)).toBe("/dashboard");
  });

  it("never leaves the site", () => {
    for (const bad of [
      "https://evil.example/",
      "//evil.example/x",
      "/\\evil.example",
      "\\\\evil.example",
      "javascript:alert(1)",
      "data:text/html,x",
      "http://127.0.0.1:8081/",
      "https://127.0.0.1:8080/",
      " //evil.example",
      "/%0a//evil.example".replace("%0a", "\n"),
      "evil.example",
      "",
      null,
      undefined,
    ]) {
      expect(safeReturnTo(bad, origin), String(bad)).toBe("/");
    }
  });

  it("does not go back to a sign-in page", () => {
    expect(safeReturnTo("/login?return_to=/wallet", origin)).toBe("/");
    expect(safeReturnTo("/otpauth", origin)).toBe("/");
  });

  it("builds the login path with the page to come back to", () => {
    expect(loginPath("/wallet?page=deposit")).toBe("/login?return_to=%2Fwallet%3Fpage%3Ddeposit");
    expect(loginPath("/")).toBe("/login");
  });
});
