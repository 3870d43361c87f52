import { Trans, useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { contentQueries, isInternal, useContentLang } from "./api";
import "./content.css";

// The home page's announcement strip: the latest announcements, each
// linking to its help center page (outside the app, in a new tab).
export function AnnouncementStrip({ limit = 3 }: { limit?: number }) {
  const { t, i18n } = useLingui();
  const lang = useContentLang();
  const q = useQuery(contentQueries.announcements(lang, limit));
  const list = q.data?.list ?? [];
  if (list.length === 0) return null;
  return (
    <section className="announcements" aria-labelledby="announcements-heading" data-testid="announcements">
      <h2 id="announcements-heading" className="announcements-title">
        <Trans>Announcements</Trans>
      </h2>
      <ul>
        {list.map((a) => {
          const date = (
            <time dateTime={a.published_at} className="announcement-date">
              {i18n.date(new Date(a.published_at), { dateStyle: "medium" })}
            </time>
          );
          return (
            <li key={a.id}>
              {isInternal(a.link) ? (
                <Link to={a.link}>{a.title}</Link>
              ) : (
                <a href={a.link} target="_blank" rel="noopener noreferrer" aria-label={t`${a.title} (opens in a new tab)`}>
                  {a.title}
                </a>
              )}{" "}
              {date}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
