import { Trans, useLingui } from "@lingui/react/macro";
import { useState, type ReactNode } from "react";

export type Load<T> = { state: "loading" } | { state: "error" } | { state: "ready"; data: T };

type Props = {
  id: string;
  title: string;
  note?: ReactNode;
  load: Load<unknown>;
  empty: boolean;
  onRetry: () => void;
  legend?: ReactNode;
  chart: () => ReactNode;
  table: () => ReactNode;
};

// One analytics panel: title, chart/table switch, and the loading skeleton,
// empty and error states.
export function Panel({ id, title, note, load, empty, onRetry, legend, chart, table }: Props) {
  const { t } = useLingui();
  const [view, setView] = useState<"chart" | "table">("chart");
  const headingId = `${id}-title`;
  return (
    <section
      className="md-panel"
      aria-labelledby={headingId}
      data-testid={`panel-${id}`}
      data-state={load.state === "ready" && empty ? "empty" : load.state}
    >
      <div className="md-panel-head">
        <h2 id={headingId}>{title}</h2>
        <div className="md-switch" role="group" aria-label={t`View of ${title}`}>
          <button type="button" aria-pressed={view === "chart"} onClick={() => setView("chart")}>
            <Trans>Chart</Trans>
          </button>
          <button type="button" aria-pressed={view === "table"} onClick={() => setView("table")}>
            <Trans>Table</Trans>
          </button>
        </div>
      </div>
      {note ? <div className="md-panel-note">{note}</div> : null}
      {load.state === "loading" ? (
        <div className="md-skeleton" role="status" aria-busy="true" data-testid="skeleton">
          <span className="visually-hidden">
            <Trans>Loading…</Trans>
          </span>
        </div>
      ) : load.state === "error" ? (
        <div className="notice notice--error md-state" role="alert">
          <p className="notice-title">
            <Trans>Network anomaly</Trans>
          </p>
          <p>
            <Trans>This data could not be loaded. Check your connection and try again.</Trans>
          </p>
          <button type="button" className="button" onClick={onRetry}>
            <Trans>Retry</Trans>
          </button>
        </div>
      ) : empty ? (
        <p className="md-state md-empty" data-testid="empty">
          <Trans>No data for this period.</Trans>
        </p>
      ) : view === "chart" ? (
        <>
          {legend}
          {chart()}
        </>
      ) : (
        table()
      )}
    </section>
  );
}
