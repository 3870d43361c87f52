import { I18nProvider } from "@lingui/react";
import { QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { queryClient } from "./api/queries";
import { MemberSync } from "./features/dashboard/sync";
import { i18n } from "./i18n";
import { ThemeProvider } from "./theme";

export function AppProviders({ children }: { children: ReactNode }) {
  return (
    <QueryClientProvider client={queryClient}>
      <I18nProvider i18n={i18n}>
        <ThemeProvider>
          {/* Signed in: favourites and preferences from the member's account. */}
          <MemberSync />
          {children}
        </ThemeProvider>
      </I18nProvider>
    </QueryClientProvider>
  );
}
