import { Trans, useLingui } from "@lingui/react/macro";
import { lazy, Suspense } from "react";
import { Await, useLoaderData } from "react-router";
import { fetchMovers } from "~/api/queries";
import { ExchangeList, ExchangeListError, ExchangeListLoading } from "~/components/ExchangeList";
import {
  AnnouncementStrip,
  BannerCarousel,
  ContactButton,
  ExchangeCarousel,
  Faq,
  Features,
  HomeEvents,
  Movers,
  MoversLoading,
  QuickRegister,
} from "~/components/Home";
import { PageTitle } from "~/components/PageTitle";
import { loadExchanges } from "~/lib/exchanges";
import { useMember } from "~/lib/session";

// The member's balance card is loaded only for a member: a visitor's first
// load stays without it.
const HomeBalance = lazy(() => import("~/features/home/Balance"));

// Nothing is awaited: the page renders at once with loading states, and
// <Await> shows each part or its error.
export function clientLoader() {
  const exchanges = loadExchanges();
  const movers = fetchMovers(5);
  // Rejections are handled by <Await>; this keeps them from being reported
  // as unhandled before the page renders.
  exchanges.catch(() => undefined);
  movers.catch(() => undefined);
  return { exchanges, movers };
}

export default function Home() {
  const { t } = useLingui();
  const { exchanges, movers } = useLoaderData<typeof clientLoader>();
  const member = useMember();
  return (
    <div className="page home">
      <PageTitle page={t`Home`} />
      <section className="hero">
        <h1>
          <Trans>Trade spot and perpetual futures across exchanges, in one place.</Trans>
        </h1>
        {/* A visitor's quick registration; a member sees their balance instead. */}
        {member === null && <QuickRegister />}
      </section>
      <BannerCarousel />
      <AnnouncementStrip />
      {/* Signed in: the estimated balance and today's change, beside the movers. */}
      <div className={member ? "home-top home-top--member" : "home-top"}>
        {member && (
          <Suspense fallback={null}>
            <HomeBalance />
          </Suspense>
        )}
        <section aria-labelledby="movers-heading">
          <h2 id="movers-heading" className="section-title">
            <Trans>Top movers (24h)</Trans>
          </h2>
          <Suspense fallback={<MoversLoading />}>
            <Await
              resolve={movers}
              errorElement={
                <p className="notice notice--error" role="alert">
                  <Trans>Network anomaly</Trans>
                </p>
              }
            >
              {(list) => <Movers movers={list} />}
            </Await>
          </Suspense>
        </section>
      </div>
      <Suspense fallback={null}>
        <Await resolve={exchanges} errorElement={<span hidden />}>
          {(list) => <ExchangeCarousel exchanges={list} />}
        </Await>
      </Suspense>
      <section aria-labelledby="exchanges-heading">
        <h2 id="exchanges-heading" className="section-title">
          <Trans>Exchanges</Trans>
        </h2>
        <Suspense fallback={<ExchangeListLoading />}>
          <Await resolve={exchanges} errorElement={<ExchangeListError />}>
            {(list) => <ExchangeList exchanges={list} />}
          </Await>
        </Suspense>
      </section>
      <section aria-labelledby="features-heading">
        <h2 id="features-heading" className="section-title">
          <Trans>Why exhub</Trans>
        </h2>
        <Features />
      </section>
      <section aria-labelledby="events-heading" className="events-banner">
        <h2 id="events-heading" className="section-title">
          <Trans>Events</Trans>
        </h2>
        <HomeEvents />
      </section>
      <section aria-labelledby="faq-heading">
        <h2 id="faq-heading" className="section-title">
          <Trans>Frequently asked questions</Trans>
        </h2>
        <Faq />
        <p className="contact">
          <ContactButton />
        </p>
      </section>
    </div>
  );
}
