import { useLingui } from "@lingui/react/macro";
import type { ReactNode } from "react";
import { Link } from "react-router";
import { BrandLogo } from "./BrandLogo";
import { LanguageMenu } from "./LanguageMenu";
import { ThemeToggle } from "./ThemeToggle";

export function TopBar() {
  const { t } = useLingui();
  return (
    <header className="top-bar">
      <Link to="/" className="brand" aria-label={t`exhub home`}>
        <BrandLogo />
        <span className="brand-name" aria-hidden="true">
          exhub
        </span>
      </Link>
      <div className="top-bar-actions">
        <LanguageMenu />
        <ThemeToggle />
      </div>
    </header>
  );
}

export function AppShell({ children }: { children: ReactNode }) {
  const { t } = useLingui();
  return (
    <>
      <a href="#main" className="skip-link">
        {t`Skip to content`}
      </a>
      <TopBar />
      <main id="main" tabIndex={-1}>
        {children}
      </main>
      <footer className="site-footer">
        <p>{t`exhub is open source. Services may not be available in some regions.`}</p>
      </footer>
    </>
  );
}
