import { Trans, useLingui } from "@lingui/react/macro";
import type { ReactNode } from "react";
import { isRouteErrorResponse, Links, Meta, Outlet, Scripts, ScrollRestoration } from "react-router";
import type { Route } from "./+types/root";
import "./app.css";
import { AppShell } from "./components/AppShell";
import { PageTitle } from "./components/PageTitle";
import { activateLocale, initialLocale } from "./i18n";
import { chunkFailure, type ChunkFailure } from "./lib/chunk-error";
import { bootScript } from "./preferences";
import { AppProviders } from "./providers";

// Rendered once at build time into index.html, then hydrated.
export function Layout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" data-theme="dark" suppressHydrationWarning>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="dark light" />
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
        <script dangerouslySetInnerHTML={{ __html: bootScript }} />
        <Meta />
        <Links />
      </head>
      <body>
        {children}
        <ScrollRestoration />
        <Scripts />
      </body>
    </html>
  );
}

// Loads the chosen language before the first render so the page never
// shows in the wrong language.
export async function clientLoader() {
  const locale = initialLocale();
  await activateLocale(locale);
  return { locale };
}

// The language is switched in place; the root never needs reloading.
export function shouldRevalidate() {
  return false;
}

export function HydrateFallback() {
  return (
    <div className="boot" aria-busy="true">
      <div className="boot-spinner" aria-hidden="true" />
    </div>
  );
}

export default function App() {
  return (
    <AppProviders>
      <AppShell>
        <Outlet />
      </AppShell>
    </AppProviders>
  );
}

// A piece of the app that could not be downloaded: say so and offer a
// reload, which fetches the current files.
function ChunkErrorContent({ failure, reload }: { failure: ChunkFailure; reload: () => void }) {
  const { t } = useLingui();
  const id = failure.id;
  const what = failure.css ? t`Loading CSS chunk ${id} failed.` : t`Loading chunk ${id} failed.`;
  const how = failure.address ? `(${failure.type}: ${failure.address})` : `(${failure.type})`;
  return (
    <div className="page" role="alert">
      <PageTitle page={t`Error`} />
      <h1>{t`Could not load this page`}</h1>
      <p>
        <Trans>Part of the app failed to download, usually because of the connection or a new version. Reload to try again.</Trans>
      </p>
      <p className="chunk-error-detail">
        {what} <span>{how}</span>
      </p>
      <p>
        <button type="button" className="button button--primary" onClick={reload}>
          <Trans>Reload</Trans>
        </button>
      </p>
    </div>
  );
}

export function ErrorContent({ error, reload = () => window.location.reload() }: { error: unknown; reload?: () => void }) {
  const { t } = useLingui();
  const failure = chunkFailure(error);
  if (failure) return <ChunkErrorContent failure={failure} reload={reload} />;
  const notFound = isRouteErrorResponse(error) && error.status === 404;
  if (import.meta.env.DEV) console.error(error);
  return (
    <div className="page">
      <PageTitle page={notFound ? t`Page not found` : t`Error`} />
      <h1>{notFound ? t`Page not found` : t`Something went wrong`}</h1>
      <p>
        <Trans>Please reload the page. If the problem persists, try again later.</Trans>
      </p>
      <p>
        <a href="/" className="button">
          <Trans>Back to home</Trans>
        </a>
      </p>
    </div>
  );
}

export function ErrorBoundary({ error }: Route.ErrorBoundaryProps) {
  return (
    <AppProviders>
      <AppShell>
        <ErrorContent error={error} />
      </AppShell>
    </AppProviders>
  );
}
