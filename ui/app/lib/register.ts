import { writeStored } from "~/preferences";

// Home quick-register: the typed e-mail or phone becomes the register
// account, read by the sign-up page.
export const REGISTER_ACCOUNT_KEY = "exhub.register.account";

// Stores the account and returns true when there is one to store; empty
// (or blank) input is ignored.
export function storeRegisterAccount(input: string): boolean {
  const account = input.trim();
  if (account === "") return false;
  writeStored(REGISTER_ACCOUNT_KEY, account);
  return true;
}
