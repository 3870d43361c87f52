import { useQuery } from "@tanstack/react-query";
import type { Exchange } from "~/api/client";
import { fetchExchanges, marketQueries, queryClient } from "~/api/queries";

// The exchange list is shared by the navigation menus and the pages through
// the query cache: one request per minute at most, fetched again after a
// failure.
export function loadExchanges(): Promise<Exchange[]> {
  return fetchExchanges();
}

// Forgets the cached list (tests, and a retry after an error).
export function resetExchanges(): void {
  queryClient.removeQueries({ queryKey: marketQueries.exchanges().queryKey, exact: true });
}

// The list for components (null until it arrives; the menus stay without
// entries on an error). No automatic retry: the pages show the error with a
// Retry button, and their new request fills the menus too; retrying here
// would hold a page's error back behind the menus' retries.
export function useExchanges(): Exchange[] | null {
  const { data } = useQuery({ ...marketQueries.exchanges(), retry: false, select: (d) => d.exchanges ?? [] });
  return data ?? null;
}
