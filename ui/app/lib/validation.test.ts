import { setupI18n } from "@lingui/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { i18n } from "~/i18n";
import { activateLocale } from "~/i18n";
import {
  checkPassword,
  emailCodeSchema,
  emailSchema,
  mobileSchema,
  passwordPairSchema,
  passwordSchema,
  sameAs,
  totpCodeSchema,
  validationText,
} from "./validation";

function codes(schema: z.ZodType, value: unknown): string[] {
  const r = schema.safeParse(value);
  return r.success ? [] : r.error.issues.map((i) => i.message);
}

describe("password rules", () => {
  it("accepts a password that meets every rule, 6 to 15 characters", () => {
    expect(codes(passwordSchema, "Abc12!")).toEqual([]);
    expect(codes(passwordSchema, "Abcdefghij12#$x")).toEqual([]);
  });

  it("reports each broken rule with its own message", () => {
    expect(codes(passwordSchema, "")).toEqual([
      "password.length",
      "password.number",
      "password.lowercase",
      "password.uppercase",
      "password.special",
    ]);
    expect(codes(passwordSchema, "Abc1!")).toEqual(["password.length"]);
    expect(codes(passwordSchema, "Abcdefghij12#$xy")).toEqual(["password.length"]);
    expect(codes(passwordSchema, "Abcdef!")).toEqual(["password.number"]);
    expect(codes(passwordSchema, "ABCDE1!")).toEqual(["password.lowercase"]);
    expect(codes(passwordSchema, "abcde1!")).toEqual(["password.uppercase"]);
    expect(codes(passwordSchema, "Abcde12")).toEqual(["password.special"]);
    // White space is not a special character.
    expect(codes(passwordSchema, "Abcde1 2")).toEqual(["password.special"]);
  });

  it("gives a checklist for the field", () => {
    expect(checkPassword("abc1")).toEqual([
      { code: "password.length", ok: false },
      { code: "password.number", ok: true },
      { code: "password.lowercase", ok: true },
      { code: "password.uppercase", ok: false },
      { code: "password.special", ok: false },
    ]);
  });

  it("requires the confirmation to match, reported on the confirmation", () => {
    expect(passwordPairSchema.safeParse({ password: "Abc12!", confirm: "Abc12!" }).success).toBe(true);
    const r = passwordPairSchema.safeParse({ password: "Abc12!", confirm: "Abc12?" });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([["confirm", "password.mismatch"]]);
    const custom = z.object({ newPassword: passwordSchema, again: z.string() }).superRefine(sameAs("newPassword", "again"));
    expect(custom.safeParse({ newPassword: "Abc12!", again: "x" }).error?.issues[0]?.path).toEqual(["again"]);
  });
});

describe("email and mobile", () => {
  it("asks for an email address when empty and rejects malformed ones", () => {
    expect(codes(emailSchema, "")).toEqual(["email.required"]);
    expect(codes(emailSchema, "   ")).toEqual(["email.required"]);
    for (const bad of ["a", "a@", "@b.co", "a@b", "a b@c.co", "a@b..co", "a@-b.co", `${"x".repeat(250)}@b.co`]) {
      expect(codes(emailSchema, bad), bad).toEqual(["email.invalid"]);
    }
    expect(emailSchema.parse("  user.name+tag@example.co.jp ")).toBe("user.name+tag@example.co.jp");
  });

  it("accepts mobile numbers as people type them and keeps the digits", () => {
    expect(mobileSchema.parse("090-1234-5678")).toBe("09012345678");
    expect(mobileSchema.parse("+81 (90) 1234 5678")).toBe("+819012345678");
    expect(codes(mobileSchema, "")).toEqual(["mobile.required"]);
    for (const bad of ["12345", "1234567890123456", "09x1234", "++8190", "81+90123456"]) {
      expect(codes(mobileSchema, bad), bad).toEqual(["mobile.invalid"]);
    }
  });

  it("checks verification codes", () => {
    expect(codes(emailCodeSchema, "1234")).toEqual([]);
    expect(codes(emailCodeSchema, "12345")).toEqual(["code.email"]);
    expect(codes(totpCodeSchema, "123456")).toEqual([]);
    expect(codes(totpCodeSchema, "12a456")).toEqual(["code.totp"]);
  });
});

describe("validationText", () => {
  it("translates codes in the current language and passes other text through", async () => {
    expect(validationText(i18n, "email.invalid")).toBe("The email address is not valid.");
    expect(validationText(i18n, "mobile.required")).toBe("Please enter a correct mobile number!");
    expect(validationText(i18n, "Server said no")).toBe("Server said no");
    expect(validationText(i18n, undefined)).toBe("");
    await activateLocale("ja");
    const ja = validationText(i18n, "email.invalid");
    expect(ja).not.toBe("The email address is not valid.");
    expect(ja).toMatch(/メール/);
    expect(validationText(setupI18n({ locale: "en", messages: { en: {} } }), "password.number")).toBe(
      "The password must contain a number.",
    );
  });
});
