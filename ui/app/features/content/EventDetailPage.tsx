import { Trans, useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import { PageTitle } from "~/components/PageTitle";
import { ApiError } from "~/lib/errors";
import { contentQueries, useContentLang } from "./api";
import { StatusBadge, useEventDates } from "./EventsPage";
import { Markdown } from "./Markdown";
import "./content.css";

// /eventDetail/:eventId: the event's title, image, period and body in the
// page's language (English when the event has no version in it); an unknown
// or unpublished id shows the not-found state.
export default function EventDetailPage() {
  const { t } = useLingui();
  const { eventId = "" } = useParams();
  const lang = useContentLang();
  const q = useQuery(contentQueries.event(eventId, lang));
  const dates = useEventDates();
  const back = (
    <Link to="/event" className="event-back">
      <Trans>Back to events</Trans>
    </Link>
  );
  if (q.isPending) {
    return (
      <div className="page event-detail" aria-busy="true">
        <PageTitle page={t`Event details`} />
        {back}
        <div className="event-detail-skeleton" />
      </div>
    );
  }
  if (q.isError) {
    const missing = q.error instanceof ApiError && (q.error.status === 404 || q.error.status === 422);
    return (
      <div className="page event-detail">
        <PageTitle page={missing ? t`Event not found` : t`Event details`} />
        {back}
        {missing ? (
          <div data-testid="event-not-found">
            <h1>
              <Trans>Event not found</Trans>
            </h1>
            <p className="notice">
              <Trans>This event does not exist or is no longer published.</Trans>
            </p>
            <p>
              <Link to="/event" className="button">
                <Trans>See all events</Trans>
              </Link>
            </p>
          </div>
        ) : (
          <p className="notice notice--error" role="alert">
            <Trans>Network anomaly</Trans>{" "}
            <button type="button" className="button" onClick={() => void q.refetch()}>
              <Trans>Retry</Trans>
            </button>
          </p>
        )}
      </div>
    );
  }
  const e = q.data;
  return (
    <div className="page event-detail" data-testid="event-detail" data-event-id={e.id}>
      <PageTitle page={e.title} />
      {back}
      <article>
        <header className="event-detail-head">
          <h1>{e.title}</h1>
          <p className="event-detail-meta">
            <StatusBadge status={e.status} /> <span data-testid="event-dates">{dates(e)}</span>
          </p>
        </header>
        {e.image_url ? (
          <img src={e.image_url} alt="" className="event-detail-image" width={640} height={360} />
        ) : null}
        {e.summary ? <p className="event-detail-summary">{e.summary}</p> : null}
        <Markdown source={e.body} />
      </article>
    </div>
  );
}
