import { Trans, useLingui } from "@lingui/react/macro";
import { Suspense } from "react";
import { Await, useLoaderData } from "react-router";
import { fetchExchanges } from "~/api/client";
import { ExchangeList, ExchangeListError, ExchangeListLoading } from "~/components/ExchangeList";
import { PageTitle } from "~/components/PageTitle";

// The list is not awaited: the page renders at once with a loading state,
// and <Await> shows the list or the error.
export function clientLoader() {
  const exchanges = fetchExchanges();
  // The rejection is handled by <Await>; this keeps it from being reported
  // as unhandled before the page renders.
  exchanges.catch(() => undefined);
  return { exchanges };
}

export default function Home() {
  const { t } = useLingui();
  const { exchanges } = useLoaderData<typeof clientLoader>();
  return (
    <div className="page">
      <PageTitle page={t`Home`} />
      <section className="hero">
        <h1>
          <Trans>Trade spot and perpetual futures across exchanges, in one place.</Trans>
        </h1>
      </section>
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
    </div>
  );
}
