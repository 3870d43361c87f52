import { useLingui } from "@lingui/react/macro";
import { useSyncExternalStore, type ReactNode } from "react";
import { Link } from "react-router";

// The trade screen's notices ("Order successfully", "Order failed", "Your
// available balance is insufficient." with its deposit and transfer links):
// a small store outside React so any part of the screen can raise one, shown
// by <TradeToasts/> in a live region. Each stays TOAST_MS, or until closed.

export type ToastAction = { label: string; to: string };
export type Toast = { id: number; kind: "success" | "error" | "info"; text: string; detail?: string; actions?: ToastAction[] };

export const TOAST_MS = 5000;

let toasts: Toast[] = [];
let nextId = 1;
const listeners = new Set<() => void>();

function emit(): void {
  for (const l of listeners) l();
}

export function pushToast(t: Omit<Toast, "id">, ms = TOAST_MS): number {
  const id = nextId++;
  toasts = [...toasts, { ...t, id }].slice(-5);
  emit();
  if (ms > 0) setTimeout(() => dismissToast(id), ms);
  return id;
}

export function dismissToast(id: number): void {
  const next = toasts.filter((x) => x.id !== id);
  if (next.length === toasts.length) return;
  toasts = next;
  emit();
}

export function clearToasts(): void {
  toasts = [];
  emit();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function TradeToasts(): ReactNode {
  const { t } = useLingui();
  const list = useSyncExternalStore(subscribe, () => toasts, () => toasts);
  return (
    <div className="trade-toasts" role="status" aria-live="polite" data-testid="trade-toasts">
      {list.map((x) => (
        <div key={x.id} className={`toast toast--${x.kind}`} data-kind={x.kind}>
          <p className="toast-text">{x.text}</p>
          {x.detail ? <p className="toast-detail">{x.detail}</p> : null}
          {x.actions?.length ? (
            <p className="toast-actions">
              {x.actions.map((a) => (
                <Link key={a.label} to={a.to} className="button button--small">
                  {a.label}
                </Link>
              ))}
            </p>
          ) : null}
          <button type="button" className="icon-button toast-close" aria-label={t`Close`} onClick={() => dismissToast(x.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
