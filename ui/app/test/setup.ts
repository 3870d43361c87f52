import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";
import { setApiFetch } from "~/api/client";
import { queryClient } from "~/api/queries";
import { activateLocale } from "~/i18n";
import { resetExchanges } from "~/lib/exchanges";
import { resetNetwork } from "~/lib/network";

// jsdom has no CSS.escape (every browser does); react-aria uses it.
if (typeof window !== "undefined" && typeof globalThis.CSS?.escape !== "function") {
  const escape = (s: string) => s.replace(/[^\w-]/g, (c) => `\\${c}`);
  globalThis.CSS = Object.assign(globalThis.CSS ?? {}, { escape }) as typeof CSS;
}

// findBy*/waitFor wait for a condition, not for a time: the library's 1 s default is a timing budget that a loaded
// two-core CI machine overruns (a lazily loaded dialog took longer), so the bound is generous; a passing wait ends
// as soon as its condition holds.
configure({ asyncUtilTimeout: 15_000 });

afterEach(async () => {
  if (typeof window === "undefined") return; // node-environment tests
  cleanup();
  setApiFetch(undefined);
  queryClient.clear();
  resetExchanges();
  resetNetwork();
  window.localStorage.clear();
  document.documentElement.removeAttribute("data-theme");
  document.title = "";
  await activateLocale("en");
});
