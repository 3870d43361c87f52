import { useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link } from "react-router";
import { contentQueries, isInternal, useContentLang, type ContentBanner } from "./api";
import "./content.css";

// Banners rotate slower than the exchange slides: a banner carries a message to read.
export const BANNER_DELAY_MS = 5000;

function prefersReducedMotion(): boolean {
  return typeof window !== "undefined" && window.matchMedia?.("(prefers-reduced-motion: reduce)").matches === true;
}

export function BannerLink({ banner, children }: { banner: ContentBanner; children: React.ReactNode }) {
  if (!banner.link) return <div className="banner-frame">{children}</div>;
  if (isInternal(banner.link))
    return (
      <Link className="banner-frame" to={banner.link}>
        {children}
      </Link>
    );
  return (
    <a className="banner-frame" href={banner.link} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

// The home page's banner carousel: the home banners of GET
// /api/v1/content/banners (page 1, 2 items). Autoplay every delayMs, paused
// while hovered or focused, by the Pause button, and for users who ask for
// reduced motion; the dots and Previous/Next work with the keyboard.
export function BannerCarousel({ delayMs = BANNER_DELAY_MS }: { delayMs?: number }) {
  const { t } = useLingui();
  const lang = useContentLang();
  const q = useQuery(contentQueries.banners("home", lang));
  const slides = q.data?.list ?? [];
  const [index, setIndex] = useState(0);
  const [hovered, setHovered] = useState(false);
  const [stopped, setStopped] = useState(false);
  const [reduced] = useState(prefersReducedMotion);
  const count = slides.length;
  const paused = hovered || stopped || reduced;
  useEffect(() => {
    if (paused || count < 2) return;
    const timer = setInterval(() => setIndex((i) => (i + 1) % count), delayMs);
    return () => clearInterval(timer);
  }, [paused, count, delayMs]);
  if (q.isPending) return <div className="banner-carousel banner-carousel--loading" aria-hidden="true" />;
  // Banners are promotion: without them (or on an error) the home page simply has none.
  if (count === 0) return null;
  const current = index % count;
  const go = (d: number) => setIndex((current + d + count) % count);
  return (
    <section
      className="banner-carousel"
      aria-roledescription={t`carousel`}
      aria-label={t`Highlights`}
      data-testid="banner-carousel"
      data-paused={paused ? "true" : "false"}
      onMouseEnter={() => setHovered(true)}
      onMouseLeave={() => setHovered(false)}
      onFocus={() => setHovered(true)}
      onBlur={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setHovered(false);
      }}
    >
      <div className="banner-track" aria-live={paused ? "polite" : "off"}>
        {slides.map((b, i) => (
          <div
            key={b.id}
            className="banner-slide"
            role="group"
            aria-roledescription={t`slide`}
            aria-label={t`${i + 1} of ${count}`}
            hidden={i !== current}
            data-testid="banner-slide"
          >
            <BannerLink banner={b}>
              <img src={b.image_url} alt="" className="banner-image" width={1200} height={400} />
              <span className="banner-caption" data-testid="banner-caption">
                {b.title}
              </span>
            </BannerLink>
          </div>
        ))}
      </div>
      {count > 1 ? (
        <div className="banner-controls">
          <button type="button" className="banner-button" onClick={() => go(-1)} aria-label={t`Previous slide`}>
            ‹
          </button>
          {slides.map((b, i) => (
            <button
              key={b.id}
              type="button"
              className="carousel-dot"
              aria-label={t`Show banner ${i + 1}`}
              aria-current={i === current ? "true" : undefined}
              onClick={() => setIndex(i)}
            />
          ))}
          <button type="button" className="banner-button" onClick={() => go(1)} aria-label={t`Next slide`}>
            ›
          </button>
          {reduced ? null : (
            <button
              type="button"
              className="banner-button banner-button--text"
              aria-pressed={stopped}
              onClick={() => setStopped((s) => !s)}
              data-testid="banner-pause"
            >
              {stopped ? t`Play` : t`Pause`}
            </button>
          )}
        </div>
      ) : null}
    </section>
  );
}

// The banner on top of the events page (the first "events" banner).
export function EventsBanner() {
  const lang = useContentLang();
  const q = useQuery(contentQueries.banners("events", lang, 1, 1));
  // Defensive: a proxy or test double may answer without a list.
  const b = q.data?.list?.[0];
  if (!b) return null;
  return (
    <div className="events-top-banner" data-testid="events-banner">
      <BannerLink banner={b}>
        <img src={b.image_url} alt="" className="banner-image" width={1200} height={300} />
        <span className="banner-caption">{b.title}</span>
      </BannerLink>
    </div>
  );
}
