import { I18nProvider } from "@lingui/react";
import { QueryClientProvider } from "@tanstack/react-query";
import { lazy, Suspense, useEffect, useState, type ReactNode } from "react";
import { queryClient } from "./api/queries";
import { i18n } from "./i18n";
import type { SignedIn } from "./features/dashboard/sync";
import { useMember } from "./lib/session";
import { choiceCounts } from "./preferences";
import { ThemeProvider } from "./theme";

// Signed in: favourites and preferences from the member's account. Loaded
// the first time a member is seen (visitors never download it) and kept
// mounted after that, so a sign-out can switch back to local storage.
const MemberSync = lazy(() => import("./features/dashboard/sync").then((m) => ({ default: m.MemberSync })));

// The choices counted when the member is first seen go with it: a language or
// theme chosen while MemberSync's code downloads is newer than the member's
// stored preferences and must not be undone by them.
function MemberSyncOnce() {
  const member = useMember();
  const [seen, setSeen] = useState<SignedIn | null>(null);
  const memberId = member?.id ?? null;
  useEffect(() => {
    if (memberId && !seen) setSeen({ memberId, choices: choiceCounts() });
  }, [memberId, seen]);
  return seen ? (
    <Suspense fallback={null}>
      <MemberSync signedIn={seen} />
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
