import { useSyncExternalStore } from "react";

// Whether the page has lost the API or the live stream. Pages report what
// they see; the shell shows "Network anomaly" with a refresh action while
// any source is down.
const down = new Set<string>();
const listeners = new Set<() => void>();
let snapshot = false;

function emit(): void {
  const next = down.size > 0;
  if (next === snapshot) return;
  snapshot = next;
  for (const l of listeners) l();
}

export function reportDown(source: string): void {
  down.add(source);
  emit();
}

export function reportUp(source: string): void {
  down.delete(source);
  emit();
}

export function resetNetwork(): void {
  down.clear();
  emit();
}

export function useNetworkDown(): boolean {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => snapshot,
    () => false,
  );
}
