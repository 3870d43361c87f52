import type { PasswordRule } from "./kratos";

// SPEC section 5: 6 to 15 characters with a number, a lowercase letter, an
// uppercase letter and a special character. The BFF gate checks the same
// rules server side; Kratos enforces the 6-character floor.
export const PASSWORD_MIN = 6;
export const PASSWORD_MAX = 15;

// The rules a password breaks, in the order the form lists them.
export function brokenPasswordRules(pw: string): PasswordRule[] {
  const out: PasswordRule[] = [];
  const n = [...pw].length;
  if (n < PASSWORD_MIN || n > PASSWORD_MAX) out.push("length");
  if (!/\p{Nd}/u.test(pw)) out.push("number");
  if (!/\p{Ll}/u.test(pw)) out.push("lowercase");
  if (!/\p{Lu}/u.test(pw)) out.push("uppercase");
  if (!/[^\p{L}\p{Nd}\s]/u.test(pw)) out.push("special");
  return out;
}
