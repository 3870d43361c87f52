import { Trans, useLingui } from "@lingui/react/macro";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link, useSearchParams } from "react-router";
import { PageTitle } from "~/components/PageTitle";
import { contentQueries, EVENTS_PAGE_SIZE, useContentLang, type ContentEvent, type EventWindow } from "./api";
import { EventsBanner } from "./Banners";
import "./content.css";

// /event: the events banner, Current / Ended tabs and a page of event cards.
// The tab and page are in the URL (?status=ended&page=2), so Back and a
// shared link show the same page.

export function useEventDates(): (e: Pick<ContentEvent, "starts_at" | "ends_at">) => string {
  const { t, i18n } = useLingui();
  const fmt = (s: string) => i18n.date(new Date(s), { dateStyle: "medium", timeStyle: "short" });
  return (e) => {
    const start = fmt(e.starts_at);
    if (!e.ends_at) return t`From ${start}`;
    const end = fmt(e.ends_at);
    return t`${start} – ${end}`;
  };
}

export function StatusBadge({ status }: { status: ContentEvent["status"] }) {
  const { t } = useLingui();
  const label = { upcoming: t`Upcoming`, ongoing: t`Ongoing`, ended: t`Ended` }[status];
  return (
    <span className={`event-status event-status--${status}`} data-testid="event-status">
      {label}
    </span>
  );
}

function EventCard({ e }: { e: ContentEvent }) {
  const dates = useEventDates();
  return (
    <li className="event-card" data-testid="event-card" data-event-id={e.id}>
      <Link to={`/eventDetail/${encodeURIComponent(e.id)}`} className="event-card-link">
        {e.image_url ? (
          <img src={e.image_url} alt="" className="event-card-image" width={640} height={360} loading="lazy" />
        ) : (
          <div className="event-card-image event-card-image--none" aria-hidden="true" />
        )}
        <div className="event-card-text">
          <StatusBadge status={e.status} />
          <h2 className="event-card-title">{e.title}</h2>
          {e.summary ? <p className="event-card-summary">{e.summary}</p> : null}
          <p className="event-card-dates">{dates(e)}</p>
        </div>
      </Link>
    </li>
  );
}

function readWindow(v: string | null): EventWindow {
  return v === "ended" ? "ended" : "current";
}

function readPage(v: string | null): number {
  const n = Number(v);
  return Number.isInteger(n) && n >= 1 && n <= 100000 ? n : 1;
}

export default function EventsPage() {
  const { t } = useLingui();
  const lang = useContentLang();
  const [params, setParams] = useSearchParams();
  const status = readWindow(params.get("status"));
  const page = readPage(params.get("page"));
  const q = useQuery({ ...contentQueries.events(lang, status, page), placeholderData: keepPreviousData });
  const pages = q.data ? Math.max(1, Math.ceil(q.data.total / EVENTS_PAGE_SIZE)) : 1;
  const go = (next: { status?: EventWindow; page?: number }) => {
    const p = new URLSearchParams(params);
    const s = next.status ?? status;
    const n = next.page ?? (next.status ? 1 : page);
    if (s === "current") p.delete("status");
    else p.set("status", s);
    if (n === 1) p.delete("page");
    else p.set("page", String(n));
    setParams(p);
  };
  return (
    <div className="page events-page">
      <PageTitle page={t`Events`} />
      <h1>
        <Trans>Events</Trans>
      </h1>
      <EventsBanner />
      <div className="event-tabs" role="group" aria-label={t`Show events`}>
        <button
          type="button"
          className="event-tab"
          aria-pressed={status === "current"}
          onClick={() => go({ status: "current" })}
        >
          <Trans>Ongoing and upcoming</Trans>
        </button>
        <button type="button" className="event-tab" aria-pressed={status === "ended"} onClick={() => go({ status: "ended" })}>
          <Trans>Ended</Trans>
        </button>
      </div>
      {q.isPending ? (
        <ul className="event-grid" aria-busy="true">
          {[0, 1, 2].map((i) => (
            <li key={i} className="event-card event-card--skeleton" />
          ))}
        </ul>
      ) : q.isError ? (
        <p className="notice notice--error" role="alert">
          <Trans>Network anomaly</Trans>{" "}
          <button type="button" className="button" onClick={() => void q.refetch()}>
            <Trans>Retry</Trans>
          </button>
        </p>
      ) : q.data.list.length === 0 ? (
        <p className="notice" role="status" data-testid="events-empty">
          {status === "ended" ? <Trans>No ended events.</Trans> : <Trans>No events right now. Check back soon.</Trans>}
        </p>
      ) : (
        <ul className="event-grid" data-testid="event-list">
          {q.data.list.map((e) => (
            <EventCard key={e.id} e={e} />
          ))}
        </ul>
      )}
      {pages > 1 ? (
        <nav className="pager" aria-label={t`Pages`} data-testid="events-pager">
          <button type="button" className="button" disabled={page <= 1} onClick={() => go({ page: page - 1 })}>
            <Trans>Previous</Trans>
          </button>
          <span className="pager-status" aria-live="polite">
            <Trans>
              Page {page} of {pages}
            </Trans>
          </span>
          <button type="button" className="button" disabled={page >= pages} onClick={() => go({ page: page + 1 })}>
            <Trans>Next</Trans>
          </button>
        </nav>
      ) : null}
    </div>
  );
}
