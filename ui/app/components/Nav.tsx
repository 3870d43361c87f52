import { Trans, useLingui } from "@lingui/react/macro";
import { lazy, Suspense, useEffect, useId, useRef, useState, type ReactNode } from "react";
import { Link, NavLink, useLocation, useNavigate } from "react-router";
import type { Exchange } from "~/api/client";
import { areaOf, displayState, logoSrc, type Area } from "~/api/exchange-state";
import { useExchanges } from "~/lib/exchanges";
import { links } from "~/lib/links";
import { isLoggedIn, logout, useSession } from "~/lib/session";
import { writeStored } from "~/preferences";

// The dialogs and the drawer are react-aria-components (components/ui),
// loaded when first opened: they are not part of the first load.
const ConfirmDialog = lazy(() => import("./ui/Dialog").then((m) => ({ default: m.ConfirmDialog })));
const Drawer = lazy(() => import("./ui/Drawer").then((m) => ({ default: m.Drawer })));
const DrawerGroup = lazy(() => import("./ui/Drawer").then((m) => ({ default: m.DrawerGroup })));

export type MenuItem = { to: string; label: string; external?: boolean; disabled?: boolean; note?: string; icon?: string | null };

// Sub-pages remembered when a menu entry opens them (spec: "goes to /history
// with that sub-page remembered").
export const SUBPAGE_KEYS = { wallet: "exhub.wallet.page", dashboard: "exhub.dashboard.page", history: "exhub.history.page" };

function subpage(page: keyof typeof SUBPAGE_KEYS, sub: string): string {
  return `/${page}?page=${encodeURIComponent(sub)}#${page}:${sub}`;
}

export function rememberSubpage(to: string): void {
  const m = /^\/(wallet|dashboard|history)\?page=([^#&]+)/.exec(to);
  if (m) writeStored(SUBPAGE_KEYS[m[1] as keyof typeof SUBPAGE_KEYS], decodeURIComponent(m[2]!));
}

// Trading entries per exchange, from what the plugins describe.
export function tradeItems(exchanges: Exchange[] | null, area: Area, comingSoon: string): MenuItem[] {
  return (exchanges ?? [])
    .filter((ex) => (ex.marketTypes ?? []).some((m) => areaOf(m) === area))
    .map((ex) => {
      const state = displayState(ex);
      return {
        to: `/${area}/${encodeURIComponent(ex.slug)}`,
        label: ex.name,
        disabled: state === "coming_soon",
        note: state === "coming_soon" ? comingSoon : undefined,
        icon: logoSrc(ex.logoSvg),
      };
    });
}

export function useMenus() {
  const { t } = useLingui();
  const exchanges = useExchanges();
  const soon = t`Coming soon`;
  return {
    markets: [
      { to: "/market", label: t`Market` },
      { to: "/marketData", label: t`Market Data` },
    ] as MenuItem[],
    spot: tradeItems(exchanges, "spot", soon),
    futures: tradeItems(exchanges, "futures", soon),
    wallet: [
      { to: subpage("wallet", "overview"), label: t`Wallet Overview` },
      { to: subpage("wallet", "deposit"), label: t`Deposit` },
      { to: subpage("wallet", "withdraw"), label: t`Withdraw` },
      { to: subpage("wallet", "convert"), label: t`Convert` },
      { to: subpage("wallet", "transfer"), label: t`Transfer` },
      { to: subpage("wallet", "exchange"), label: t`Exchange` },
      { to: subpage("wallet", "gift"), label: t`Gift` },
    ] as MenuItem[],
    dashboard: [
      { to: subpage("dashboard", "profile"), label: t`Profile` },
      { to: subpage("dashboard", "security"), label: t`Security` },
      { to: subpage("dashboard", "accounts"), label: t`Exchange accounts` },
      { to: subpage("dashboard", "self_referral"), label: t`Reward` },
    ] as MenuItem[],
    history: [
      { to: subpage("history", "spot_trading_overview"), label: t`Spot trading overview` },
      { to: subpage("history", "spot_trading_details"), label: t`Spot trading details` },
      { to: subpage("history", "futures_trading_overview"), label: t`Futures trading overview` },
      { to: subpage("history", "futures_trading_details"), label: t`Futures trading details` },
      { to: subpage("history", "funding_history"), label: t`Funding history` },
    ] as MenuItem[],
  };
}

function ItemLink({ item, onPick }: { item: MenuItem; onPick?: () => void }) {
  const body = (
    <>
      {item.icon ? <img src={item.icon} alt="" width={18} height={18} className="menu-icon" /> : null}
      <span>{item.label}</span>
      {item.note ? <span className="menu-note">{item.note}</span> : null}
    </>
  );
  if (item.disabled) {
    return (
      <span className="menu-item menu-item--disabled" aria-disabled="true">
        {body}
      </span>
    );
  }
  if (item.external) {
    return (
      <a className="menu-item" href={item.to} target="_blank" rel="noopener noreferrer" onClick={onPick}>
        {body}
      </a>
    );
  }
  return (
    <Link
      className="menu-item"
      to={item.to}
      onClick={() => {
        rememberSubpage(item.to);
        onPick?.();
      }}
    >
      {body}
    </Link>
  );
}

// Closes a menu when the page changes. Only on a change: closing on mount as
// well would shut a menu opened before the effect of a freshly mounted menu ran.
function useCloseOnNavigation(setOpen: (open: boolean) => void) {
  const { pathname } = useLocation();
  const shown = useRef(pathname);
  useEffect(() => {
    if (shown.current === pathname) return;
    shown.current = pathname;
    setOpen(false);
  }, [pathname, setOpen]);
}

// A dropdown menu: a button that opens a list of links; Escape or a click
// outside closes it.
export function Dropdown({ label, items, testId }: { label: string; items: MenuItem[]; testId?: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  useCloseOnNavigation(setOpen);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setOpen(false);
    };
    document.addEventListener("pointerdown", onDown);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("pointerdown", onDown);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);
  return (
    <div className="dropdown" ref={ref} data-testid={testId}>
      <button type="button" className="nav-button" aria-expanded={open} aria-controls={id} onClick={() => setOpen((o) => !o)}>
        {label}
        <span className="caret" aria-hidden="true" />
      </button>
      {open ? (
        <ul className="dropdown-menu" id={id}>
          {items.map((it) => (
            <li key={it.to}>
              <ItemLink item={it} onPick={() => setOpen(false)} />
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function LogoutButton() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="icon-button" aria-label={t`Log out`} title={t`Log out`} onClick={() => setOpen(true)}>
        <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
          <path d="M10 4H5v16h5M15 8l4 4-4 4M19 12H9" fill="none" stroke="currentColor" strokeWidth="1.8" />
        </svg>
      </button>
      {open ? (
        <Suspense fallback={null}>
          <ConfirmDialog
            isOpen={open}
            onOpenChange={setOpen}
            title={t`Log out`}
            confirmLabel={<Trans>OK</Trans>}
            errorText={<Trans>Logging out failed. Please try again.</Trans>}
            onConfirm={async () => {
              if (!(await logout())) return false;
              void navigate("/login");
              return true;
            }}
          >
            <p>
              <Trans>Do you want to log out?</Trans>
            </p>
          </ConfirmDialog>
        </Suspense>
      ) : null}
    </>
  );
}

export function useLoggedIn(): boolean {
  return isLoggedIn(useSession());
}

export function DesktopNav() {
  const { t } = useLingui();
  const m = useMenus();
  return (
    <nav className="main-nav" aria-label={t`Main`}>
      <Dropdown label={t`Markets`} items={m.markets} testId="nav-markets" />
      <Dropdown label={t`Spot`} items={m.spot} testId="nav-spot" />
      <Dropdown label={t`Futures`} items={m.futures} testId="nav-futures" />
    </nav>
  );
}

export function AccountNav() {
  const { t } = useLingui();
  const loggedIn = useLoggedIn();
  const m = useMenus();
  if (!loggedIn) {
    return (
      <div className="account-nav">
        <NavLink to="/login" className="button">
          {t`Log In`}
        </NavLink>
        <NavLink to="/regist" className="button button--primary">
          {t`Sign Up`}
        </NavLink>
      </div>
    );
  }
  return (
    <div className="account-nav">
      <a className="nav-button" href={links.helpCenter} target="_blank" rel="noopener noreferrer">
        {t`Help Center`}
      </a>
      <Dropdown label={t`Wallet`} items={m.wallet} />
      <Link className="button button--primary" to={m.wallet[1]!.to} onClick={() => rememberSubpage(m.wallet[1]!.to)}>
        {t`Deposit`}
      </Link>
      <Dropdown label={t`Dashboard`} items={m.dashboard} />
      <Dropdown label={t`History`} items={m.history} />
      <LogoutButton />
    </div>
  );
}

function Group({ label, items, onPick }: { label: string; items: MenuItem[]; onPick: () => void }): ReactNode {
  return (
    <DrawerGroup title={label}>
      <ul>
        {items.map((it) => (
          <li key={it.to}>
            <ItemLink item={it} onPick={onPick} />
          </li>
        ))}
      </ul>
    </DrawerGroup>
  );
}

// The phone menu: the same entries as collapsible groups.
export function MobileDrawer({ children }: { children?: ReactNode }) {
  const { t } = useLingui();
  const [open, setOpen] = useState(false);
  const loggedIn = useLoggedIn();
  const m = useMenus();
  useCloseOnNavigation(setOpen);
  const close = () => setOpen(false);
  return (
    <>
      <button
        type="button"
        className="icon-button drawer-toggle"
        aria-label={t`Menu`}
        aria-expanded={open}
        data-testid="drawer-toggle"
        onClick={() => setOpen((o) => !o)}
      >
        <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
          <path d="M4 7h16M4 12h16M4 17h16" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
        </svg>
      </button>
      {open ? (
        <Suspense fallback={null}>
        <Drawer isOpen={open} onOpenChange={setOpen} label={t`Menu`} testId="drawer">
          <Group label={t`Markets`} items={m.markets} onPick={close} />
          <Group label={t`Spot`} items={m.spot} onPick={close} />
          <Group label={t`Futures`} items={m.futures} onPick={close} />
          {loggedIn ? (
            <>
              <Group label={t`History`} items={m.history} onPick={close} />
              <Group label={t`Wallet`} items={m.wallet} onPick={close} />
              <Group label={t`Dashboard`} items={m.dashboard} onPick={close} />
            </>
          ) : (
            <div className="drawer-account">
              <Link to="/login" className="button" onClick={close}>
                {t`Log In`}
              </Link>
              <Link to="/regist" className="button button--primary" onClick={close}>
                {t`Sign Up`}
              </Link>
            </div>
          )}
          <div className="drawer-prefs">{children}</div>
          <a className="menu-item" href={links.contact} target="_blank" rel="noopener noreferrer">
            {t`Contact us`}
          </a>
          {loggedIn ? <LogoutButton /> : null}
        </Drawer>
        </Suspense>
      ) : null}
    </>
  );
}
