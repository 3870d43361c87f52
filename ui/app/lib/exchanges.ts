import { useEffect, useState } from "react";
import { fetchExchanges, type Exchange } from "~/api/client";

// The exchange list is shared by the navigation menus and the pages: one
// request per page load, fetched again after a failure.
let pending: Promise<Exchange[]> | null = null;

export function loadExchanges(): Promise<Exchange[]> {
  if (!pending) {
    const p = fetchExchanges();
    pending = p;
    p.catch(() => {
      if (pending === p) pending = null;
    });
  }
  return pending;
}

// Forgets the cached list (tests, and a retry after an error).
export function resetExchanges(): void {
  pending = null;
}

export function useExchanges(): Exchange[] | null {
  const [list, setList] = useState<Exchange[] | null>(null);
  useEffect(() => {
    let live = true;
    loadExchanges().then(
      (l) => live && setList(l),
      () => undefined, // the menus stay without entries; pages show the error
    );
    return () => {
      live = false;
    };
  }, []);
  return list;
}
