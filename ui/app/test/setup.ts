import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";
import { setApiFetch } from "~/api/client";
import { activateLocale } from "~/i18n";

afterEach(async () => {
  if (typeof window === "undefined") return; // node-environment tests
  cleanup();
  setApiFetch(undefined);
  window.localStorage.clear();
  document.documentElement.removeAttribute("data-theme");
  document.title = "";
  await activateLocale("en");
});
