import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";
import { setApiFetch } from "~/api/client";
import { activateLocale } from "~/i18n";
import { resetExchanges } from "~/lib/exchanges";
import { resetNetwork } from "~/lib/network";

afterEach(async () => {
  if (typeof window === "undefined") return; // node-environment tests
  cleanup();
  setApiFetch(undefined);
  resetExchanges();
  resetNetwork();
  window.localStorage.clear();
  document.documentElement.removeAttribute("data-theme");
  document.title = "";
  await activateLocale("en");
});
