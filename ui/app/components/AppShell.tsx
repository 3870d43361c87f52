import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useState, type ReactNode } from "react";
import { Link, useLocation } from "react-router";
import { links, linkSettings, xLink } from "~/lib/links";
import { useNetworkDown } from "~/lib/network";
import { useSession } from "~/lib/session";
import { useVisibilityReload } from "~/lib/visibility";
import { BrandLogo } from "./BrandLogo";
import { LanguageMenu } from "./LanguageMenu";
import { AccountNav, DesktopNav, MobileDrawer } from "./Nav";
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
      <DesktopNav />
      <div className="top-bar-actions">
        <div className="desktop-only">
          <AccountNav />
        </div>
        <LanguageMenu />
        <ThemeToggle />
        <MobileDrawer />
      </div>
    </header>
  );
}

// The trading routes reload when the page becomes visible again.
export function isReloadRoute(pathname: string): boolean {
  return /^\/(futures|spot)(\/|$)/.test(pathname);
}

function NavigationEffects() {
  const { pathname } = useLocation();
  // Every navigation starts at the top, smoothly.
  useEffect(() => {
    if (typeof window.scrollTo !== "function") return;
    const reduce = window.matchMedia?.("(prefers-reduced-motion: reduce)").matches;
    try {
      window.scrollTo({ top: 0, behavior: reduce ? "auto" : "smooth" });
    } catch {
      // jsdom has no scrolling
    }
  }, [pathname]);
  useVisibilityReload(isReloadRoute(pathname), () => window.location.reload());
  return null;
}

function NetworkBanner() {
  const down = useNetworkDown();
  if (!down) return null;
  return (
    <div className="network-banner" role="alert" data-testid="network-anomaly">
      <span className="notice-title">
        <Trans>Network anomaly</Trans>
      </span>
      <span>
        <Trans>Live data is not reaching this page.</Trans>
      </span>
      <button type="button" className="button" onClick={() => window.location.reload()}>
        <Trans>Refresh</Trans>
      </button>
    </div>
  );
}

function CommunityIcon({ href, label, path }: { href: string; label: string; path: string }) {
  return (
    <a href={href} target="_blank" rel="noopener noreferrer" aria-label={label} title={label} className="community-icon">
      <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
        <path d={path} fill="currentColor" />
      </svg>
    </a>
  );
}

// A page the deployment supplies (terms, privacy): a link once its build
// variable is set, and until then plain text saying it is not configured.
function OptionalLink({ href, setting, children }: { href: string | null; setting: string; children: string }) {
  const { t } = useLingui();
  if (href) {
    return (
      <a href={href} target="_blank" rel="noopener noreferrer">
        {children}
      </a>
    );
  }
  return (
    <span className="link-unset" aria-disabled="true" title={t`Set ${setting} when building the interface.`} data-setting={setting} style={{ color: "var(--text-muted)" }}>
      {children} <small>{t`(not configured)`}</small>
    </span>
  );
}

export function Footer() {
  const { t, i18n } = useLingui();
  const session = useSession();
  const x = xLink(i18n.locale, session?.user.tisjp === true);
  const year = new Date().getFullYear();
  return (
    <footer className="site-footer">
      <div className="footer-cols">
        <section>
          <h2 className="footer-title">exhub</h2>
          <ul>
            <li>
              <a href={links.about} target="_blank" rel="noopener noreferrer">{t`About Us`}</a>
            </li>
            <li>
              <OptionalLink href={links.terms} setting={linkSettings.terms}>{t`Terms of Use`}</OptionalLink>
            </li>
            <li>
              <OptionalLink href={links.privacy} setting={linkSettings.privacy}>{t`Privacy Policy`}</OptionalLink>
            </li>
            <li>
              <a href={links.announcement} target="_blank" rel="noopener noreferrer">{t`Announcement`}</a>
            </li>
          </ul>
        </section>
        <section>
          <h2 className="footer-title">{t`Products`}</h2>
          <ul>
            <li>
              <Link to="/market">{t`Futures`}</Link>
            </li>
            <li>
              <Link to="/market?tab=spot">{t`Spot`}</Link>
            </li>
          </ul>
        </section>
        <section>
          <h2 className="footer-title">{t`Support`}</h2>
          <ul>
            <li>
              <a href={links.helpCenter} target="_blank" rel="noopener noreferrer">{t`Help Center`}</a>
            </li>
          </ul>
        </section>
        <section>
          <h2 className="footer-title">{t`Community`}</h2>
          <div className="community" data-testid="community">
            <CommunityIcon href={links.telegram} label={t`Telegram`} path="M21 4 3 11l5 2 2 6 3-4 5 4 3-15ZM9 13l8-6-6 7" />
            <CommunityIcon href={links.youtube} label={t`YouTube`} path="M3 7c0-2 1-3 3-3h12c2 0 3 1 3 3v10c0 2-1 3-3 3H6c-2 0-3-1-3-3V7Zm7 2v6l5-3-5-3Z" />
            <CommunityIcon href={x} label="X" path="M4 4h4l12 16h-4L4 4Zm0 16 6.5-7M20 4l-6.5 7" />
            <CommunityIcon href={links.discord} label={t`Discord`} path="M5 6c4-2 10-2 14 0l2 11c-2 2-4 2-6 2l-1-2H10l-1 2c-2 0-4 0-6-2L5 6Zm4 5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3Zm6 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3Z" />
          </div>
        </section>
      </div>
      <p className="footer-note">{t`exhub is open source. Services may not be available in some regions.`}</p>
      <p className="copyright">
        <Trans>© {year} exhub contributors</Trans>
      </p>
    </footer>
  );
}

// The floating help widget: announcement, help center, contact.
export function SideWidget() {
  const { t } = useLingui();
  const [open, setOpen] = useState(false);
  return (
    <aside className="side-widget" aria-label={t`Help`}>
      {open ? (
        <ul className="side-widget-menu" id="side-widget-menu">
          <li>
            <a href={links.announcement} target="_blank" rel="noopener noreferrer">{t`Announcement`}</a>
          </li>
          <li>
            <a href={links.helpCenter} target="_blank" rel="noopener noreferrer">{t`Help Center`}</a>
          </li>
          <li>
            <a href={links.contact} target="_blank" rel="noopener noreferrer">{t`Contact us`}</a>
          </li>
        </ul>
      ) : null}
      <button
        type="button"
        className="side-widget-button"
        aria-expanded={open}
        aria-controls="side-widget-menu"
        aria-label={t`Help and contact`}
        data-testid="side-widget"
        onClick={() => setOpen((o) => !o)}
      >
        ?
      </button>
    </aside>
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
      <NavigationEffects />
      <NetworkBanner />
      <main id="main" tabIndex={-1}>
        {children}
      </main>
      <Footer />
      <SideWidget />
    </>
  );
}
