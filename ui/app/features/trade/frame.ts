import { useCallback, useEffect, useRef } from "react";

// Coalesces work to one run per animation frame: stream messages are
// applied as they come (cheap), the React state is set once per frame, so
// a burst of messages costs one render and none is dropped.
export function useFrameScheduler(run: () => void): () => void {
  const pending = useRef<number | null>(null);
  const runRef = useRef(run);
  runRef.current = run;
  useEffect(
    () => () => {
      if (pending.current !== null) cancelFrame(pending.current);
      pending.current = null;
    },
    [],
  );
  return useCallback(() => {
    if (pending.current !== null) return;
    pending.current = requestFrame(() => {
      pending.current = null;
      runRef.current();
    });
  }, []);
}

// A hidden tab gets no animation frames; a timer keeps state current there
// too (the browser throttles it).
function requestFrame(cb: () => void): number {
  if (typeof requestAnimationFrame === "function" && typeof document !== "undefined" && !document.hidden) {
    return requestAnimationFrame(cb) as unknown as number;
  }
  return setTimeout(cb, 16) as unknown as number;
}

function cancelFrame(id: number): void {
  if (typeof cancelAnimationFrame === "function") cancelAnimationFrame(id);
  clearTimeout(id);
}
