import { Trans, useLingui } from "@lingui/react/macro";
import { lazy, Suspense, useEffect, useId, useState, type FormEvent } from "react";
import { Link, useNavigate } from "react-router";
import type { Exchange, Mover } from "~/api/client";
import { signOf } from "~/lib/decimal";
import { useFormat } from "~/lib/format";
import { displayState, logoSrc } from "~/api/exchange-state";
import { links } from "~/lib/links";
import { storeRegisterAccount } from "~/lib/register";

// The operator's content on home (features/content) loads with its data, not
// with the page: its code stays out of a visitor's first load.
const LazyBanners = lazy(() => import("~/features/content/Banners").then((m) => ({ default: m.BannerCarousel })));
const LazyAnnouncements = lazy(() =>
  import("~/features/content/Announcements").then((m) => ({ default: m.AnnouncementStrip })),
);
const LazyEventsBanner = lazy(() => import("~/features/content/Banners").then((m) => ({ default: m.EventsBanner })));

// The operator's home banners (a carousel of 2, GET /api/v1/content/banners);
// the loading box keeps the page from shifting while code and data arrive.
export function BannerCarousel() {
  return (
    <Suspense fallback={<div className="banner-carousel banner-carousel--loading" aria-hidden="true" />}>
      <LazyBanners />
    </Suspense>
  );
}

// The latest announcements, linking to the help center.
export function AnnouncementStrip() {
  return (
    <Suspense fallback={null}>
      <LazyAnnouncements />
    </Suspense>
  );
}

// The home page's events banner: the events page's banner and a link to
// every event.
export function HomeEvents() {
  return (
    <div className="home-events" data-testid="home-events">
      <Suspense fallback={null}>
        <LazyEventsBanner />
      </Suspense>
      <p>
        <Link to="/event" className="button">
          <Trans>See all events</Trans>
        </Link>
      </p>
    </div>
  );
}

export const CAROUSEL_DELAY_MS = 1500;
export const CAROUSEL_SLIDES = 3;

export function QuickRegister() {
  const { t } = useLingui();
  const navigate = useNavigate();
  const [value, setValue] = useState("");
  const id = useId();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (storeRegisterAccount(value)) void navigate("/regist");
  };
  return (
    <form className="quick-register" onSubmit={submit} data-testid="quick-register">
      <label htmlFor={id} className="visually-hidden">
        {t`E-mail or phone number`}
      </label>
      <input
        id={id}
        type="text"
        inputMode="email"
        autoComplete="email"
        placeholder={t`E-mail or phone number`}
        value={value}
        onChange={(e) => setValue(e.currentTarget.value)}
      />
      <button type="submit" className="button button--primary">
        {t`Sign Up`}
      </button>
    </form>
  );
}

function changeClass(pct: string): string {
  return ({ [-1]: "down", 0: "flat", 1: "up" } as const)[signOf(pct)];
}

export function Movers({ movers }: { movers: Mover[] }) {
  const { t } = useLingui();
  const f = useFormat();
  if (movers.length === 0) {
    return (
      <p className="notice" role="status">
        <Trans>No market data yet.</Trans>
      </p>
    );
  }
  return (
    <ul className="movers" data-testid="movers">
      {movers.map((m) => (
        <li key={`${m.exchangeSlug}:${m.symbol}`}>
          <Link
            className="mover"
            to={`/futures/${encodeURIComponent(m.exchangeSlug.toLowerCase())}/${encodeURIComponent(m.symbol)}`}
            aria-label={t`${m.symbol} on ${m.exchangeSlug}`}
          >
            <span className="mover-symbol">{m.base}</span>
            <span className="mover-pair">{m.symbol}</span>
            <span className="mover-last num">{f.step(m.last, undefined)}</span>
            <span className={`mover-change num ${changeClass(m.changePct24h)}`}>{f.changePct(m.changePct24h)}</span>
          </Link>
        </li>
      ))}
    </ul>
  );
}

export function MoversLoading() {
  return (
    <ul className="movers" aria-busy="true">
      {[0, 1, 2, 3, 4].map((i) => (
        <li key={i} className="mover mover--skeleton" />
      ))}
    </ul>
  );
}

function prefersReducedMotion(): boolean {
  return typeof window !== "undefined" && window.matchMedia?.("(prefers-reduced-motion: reduce)").matches === true;
}

// Three slides about the partner exchanges, from what their plugins
// describe. Autoplay every 1500 ms, paused while hovered or focused and
// for users who ask for reduced motion.
export function ExchangeCarousel({ exchanges, delayMs = CAROUSEL_DELAY_MS }: { exchanges: Exchange[]; delayMs?: number }) {
  const { t } = useLingui();
  const slides = exchanges.slice(0, CAROUSEL_SLIDES);
  const [index, setIndex] = useState(0);
  const [paused, setPaused] = useState(false);
  const [reduced] = useState(prefersReducedMotion);
  const count = slides.length;
  useEffect(() => {
    if (paused || reduced || count < 2) return;
    const timer = setInterval(() => setIndex((i) => (i + 1) % count), delayMs);
    return () => clearInterval(timer);
  }, [paused, reduced, count, delayMs]);
  if (count === 0) return null;
  const current = index % count;
  return (
    <div
      className="carousel"
      role="region"
      aria-roledescription={t`carousel`}
      aria-label={t`Partner exchanges`}
      data-testid="carousel"
      data-paused={paused || reduced ? "true" : "false"}
      onMouseEnter={() => setPaused(true)}
      onMouseLeave={() => setPaused(false)}
      onFocus={() => setPaused(true)}
      onBlur={() => setPaused(false)}
    >
      <div className="carousel-track" aria-live={paused ? "polite" : "off"}>
        {slides.map((ex, i) => {
          const state = displayState(ex);
          const src = logoSrc(ex.logoSvg);
          return (
            <div
              key={ex.key}
              className="carousel-slide"
              role="group"
              aria-roledescription={t`slide`}
              aria-label={t`${i + 1} of ${count}`}
              hidden={i !== current}
              data-testid="carousel-slide"
            >
              {src ? <img src={src} alt="" width={48} height={48} className="carousel-logo" /> : null}
              <div>
                <p className="carousel-name">{ex.name}</p>
                <p className="carousel-text">
                  {state === "coming_soon" ? (
                    <Trans>Coming soon to exhub.</Trans>
                  ) : (
                    <Trans>Spot and perpetual futures on {ex.name}, from one screen.</Trans>
                  )}
                </p>
              </div>
            </div>
          );
        })}
      </div>
      <div className="carousel-dots">
        {slides.map((ex, i) => (
          <button
            key={ex.key}
            type="button"
            className="carousel-dot"
            aria-label={t`Show slide ${i + 1}`}
            aria-current={i === current ? "true" : undefined}
            onClick={() => setIndex(i)}
          />
        ))}
      </div>
    </div>
  );
}

export function Features() {
  return (
    <ul className="features">
      <li>
        <h3>
          <Trans>Many exchanges, one screen</Trans>
        </h3>
        <p>
          <Trans>Prices, order books and trades from every partner exchange, in one consistent interface.</Trans>
        </p>
      </li>
      <li>
        <h3>
          <Trans>Spot and perpetual futures</Trans>
        </h3>
        <p>
          <Trans>Trade spot pairs and USDT-margined perpetuals with the same tools.</Trans>
        </p>
      </li>
      <li>
        <h3>
          <Trans>Live market data</Trans>
        </h3>
        <p>
          <Trans>Prices stream to the page as they change, with movers and market statistics.</Trans>
        </p>
      </li>
    </ul>
  );
}

export function Faq() {
  const { t } = useLingui();
  const items = [
    {
      q: t`What is exhub?`,
      a: t`An open-source hub for trading spot and perpetual futures on partner exchanges from one interface.`,
    },
    {
      q: t`Which exchanges can I use?`,
      a: t`The exchanges listed on this page. Each one shows whether trading is available or coming soon.`,
    },
    {
      q: t`How do I start?`,
      a: t`Sign up with your e-mail or phone number, then connect an account of a partner exchange.`,
    },
    {
      q: t`Is exhub available everywhere?`,
      a: t`No. Services may not be available in some regions, and users in Korea see the English interface.`,
    },
  ];
  return (
    <div className="faq" data-testid="faq">
      {items.map((it, i) => (
        <details key={it.q} open={i === 0} className="faq-item">
          <summary>{it.q}</summary>
          <p>{it.a}</p>
        </details>
      ))}
    </div>
  );
}

export function ContactButton() {
  const { t } = useLingui();
  return (
    <a className="button" href={links.contact} target="_blank" rel="noopener noreferrer">
      {t`Contact us`}
    </a>
  );
}
