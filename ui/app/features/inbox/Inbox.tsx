import { Trans, useLingui } from "@lingui/react/macro";
import { useCallback, useEffect, useRef, useState } from "react";
import { PageTitle } from "~/components/PageTitle";
import "~/features/auth/auth.css";
import { showToast } from "~/features/auth/toast";
import { fetchInbox, fetchMessageText, extractCode, type InboxResult } from "./inbox";

export const INBOX_POLL_MS = 3000;

async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // The legacy way, for browsers without the clipboard API.
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.style.position = "fixed";
    ta.style.opacity = "0";
    document.body.appendChild(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    ta.remove();
    return ok;
  }
}

// /inbox (demo mode): the e-mails and text messages the demo stack caught,
// newest first, the code of each highlighted with a copy button. Polls while
// the page is visible.
export function InboxScreen() {
  const { t, i18n } = useLingui();
  const [state, setState] = useState<InboxResult | null>(null);
  const [full, setFull] = useState<Record<string, string | undefined>>({});
  const asked = useRef(new Set<string>());

  const load = useCallback(async () => {
    const r = await fetchInbox();
    setState(r);
    if (r.status === "ok") {
      // A code the snippet cut off: read the whole message once.
      for (const m of r.messages.slice(0, 10)) {
        if (m.code || asked.current.has(m.id)) continue;
        asked.current.add(m.id);
        void fetchMessageText(m.id)
          .then((text) => setFull((q) => ({ ...q, [m.id]: extractCode(text) })))
          .catch(() => undefined);
      }
    }
  }, []);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let live = true;
    const tick = async () => {
      if (document.visibilityState === "visible") await load();
      if (live) timer = setTimeout(() => void tick(), INBOX_POLL_MS);
    };
    void tick();
    const onVisible = () => {
      if (document.visibilityState === "visible") void load();
    };
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      live = false;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [load]);

  const fmt = new Intl.DateTimeFormat(i18n.locale, { dateStyle: "short", timeStyle: "medium" });

  return (
    <div className="page" data-testid="inbox">
      <PageTitle page={t`Demo inbox`} />
      <h1>{t`Demo inbox`}</h1>
      <p className="auth-hint">
        <Trans>In demo mode, e-mails and text messages are not sent out: they arrive here. Codes are valid for 30 minutes.</Trans>
      </p>
      {state === null ? (
        <p aria-busy="true">
          <Trans>Loading…</Trans>
        </p>
      ) : null}
      {state?.status === "off" ? (
        <p className="notice" data-testid="inbox-off">
          <Trans>The demo inbox is off.</Trans>
        </p>
      ) : null}
      {state?.status === "error" ? (
        <p className="notice notice--error" role="alert">
          <Trans>Network anomaly</Trans>
        </p>
      ) : null}
      {state?.status === "ok" && state.messages.length === 0 ? (
        <p className="notice">
          <Trans>No messages yet.</Trans>
        </p>
      ) : null}
      {state?.status === "ok" && state.messages.length > 0 ? (
        <ul className="inbox-list" aria-live="polite">
          {state.messages.map((m) => {
            const code = m.code ?? full[m.id];
            const created = Date.parse(m.created);
            return (
              <li key={m.id} className="inbox-item" data-testid="inbox-item">
                <div className="inbox-meta">
                  <span>
                    <Trans>To:</Trans> {m.to.join(", ")}
                  </span>
                  {Number.isFinite(created) ? <time dateTime={m.created}>{fmt.format(created)}</time> : null}
                </div>
                <strong>{m.subject}</strong>
                {code ? (
                  <div className="inbox-code">
                    <strong data-testid="inbox-code">{code}</strong>
                    <button
                      type="button"
                      className="button"
                      onClick={() =>
                        void copy(code).then((ok) => showToast(ok ? t`Copy Successful` : t`Copy failed`, ok ? "success" : "error"))
                      }
                    >
                      <Trans>Copy</Trans>
                    </button>
                  </div>
                ) : null}
                <p className="auth-hint">{m.snippet}</p>
              </li>
            );
          })}
        </ul>
      ) : null}
    </div>
  );
}
