import { hashKey } from "@tanstack/react-query";
import { useEffect, useMemo, useSyncExternalStore } from "react";
import type { Exchange } from "~/api/client";
import { fetchExchanges, marketQueries, queryClient } from "~/api/queries";

// The exchange list is shared by the navigation menus and the pages through
// the query cache: one request per minute at most, fetched again after a
// failure.
export function loadExchanges(): Promise<Exchange[]> {
  return fetchExchanges();
}

const key = marketQueries.exchanges().queryKey;
const hash = hashKey(key);

// Forgets the cached list (tests, and a retry after an error).
export function resetExchanges(): void {
  queryClient.removeQueries({ queryKey: key, exact: true });
}

function subscribe(l: () => void): () => void {
  return queryClient.getQueryCache().subscribe((e) => {
    if (e.query.queryHash === hash) l();
  });
}

function snapshot(): { exchanges?: Exchange[] | null } | undefined {
  return queryClient.getQueryData(key);
}

// The list for the shell (null until it arrives; the menus stay without
// entries on an error). It reads the cache the pages fill rather than
// observing a query: the shell is on every first load and a query observer
// is not needed to show one shared list. No automatic retry: the pages show
// the error with a Retry button, and their new request fills the menus too.
export function useExchanges(): Exchange[] | null {
  const data = useSyncExternalStore(subscribe, snapshot, () => undefined);
  useEffect(() => {
    loadExchanges().catch(() => undefined);
  }, []);
  return useMemo(() => (data ? (data.exchanges ?? []) : null), [data]);
}
