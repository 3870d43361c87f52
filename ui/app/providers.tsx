import { I18nProvider } from "@lingui/react";
import { QueryClientProvider } from "@tanstack/react-query";
import { lazy, Suspense, useEffect, useState, type ReactNode } from "react";
import { queryClient } from "./api/queries";
import { i18n } from "./i18n";
import { useMember } from "./lib/session";
import { ThemeProvider } from "./theme";

// Signed in: favourites and preferences from the member's account. Loaded
// the first time a member is seen (visitors never download it) and kept
// mounted after that, so a sign-out can switch back to local storage.
const MemberSync = lazy(() => import("./features/dashboard/sync").then((m) => ({ default: m.MemberSync })));

function MemberSyncOnce() {
  const member = useMember();
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    if (member) setSeen(true);
  }, [member]);
  return seen ? (
    <Suspense fallback={null}>
      <MemberSync />
    </Suspense>
  ) : null;
}

export function AppProviders({ children }: { children: ReactNode }) {
  return (
    <QueryClientProvider client={queryClient}>
      <I18nProvider i18n={i18n}>
        <ThemeProvider>
          <MemberSyncOnce />
          {children}
        </ThemeProvider>
      </I18nProvider>
    </QueryClientProvider>
  );
}
