import { passwordRules } from "~/lib/validation";
import type { PasswordRule } from "./kratos";

// SPEC section 5 through the app's one set of rules (lib/validation): 6 to
// 15 characters with a number, a lowercase letter, an uppercase letter and a
// special character. The BFF gate checks the same rules server side; Kratos
// enforces the 6-character floor.

// The rules a password breaks, in the order the form lists them.
export function brokenPasswordRules(pw: string): PasswordRule[] {
  return passwordRules.filter((r) => !r.test(pw)).map((r) => r.code.replace("password.", "") as PasswordRule);
}
