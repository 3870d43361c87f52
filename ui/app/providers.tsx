import { I18nProvider } from "@lingui/react";
import type { ReactNode } from "react";
import { i18n } from "./i18n";
import { ThemeProvider } from "./theme";

export function AppProviders({ children }: { children: ReactNode }) {
  return (
    <I18nProvider i18n={i18n}>
      <ThemeProvider>{children}</ThemeProvider>
    </I18nProvider>
  );
}
