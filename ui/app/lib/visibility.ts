import { useEffect, useRef } from "react";

// Spec: on the trading routes the page reloads when it becomes visible
// again, at most once per 5 minutes, trailing only: the first return is
// held until the throttle window since the last reload has passed, and
// returns inside a window collapse into that one trailing reload.
export const VISIBILITY_RELOAD_THROTTLE_MS = 300_000;

export type Clock = {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
};

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

// A trailing throttle: calls inside a window schedule one call at the end
// of the window; the window starts when the throttle is created (the page
// load counts as a reload).
export class TrailingThrottle {
  private last: number;
  private pending: unknown = null;

  constructor(
    private readonly fn: () => void,
    private readonly windowMs: number,
    private readonly clock: Clock = realClock,
  ) {
    this.last = clock.now();
  }

  trigger(): void {
    if (this.pending !== null) return;
    const wait = Math.max(0, this.last + this.windowMs - this.clock.now());
    this.pending = this.clock.setTimeout(() => {
      this.pending = null;
      this.last = this.clock.now();
      this.fn();
    }, wait);
  }

  get scheduled(): boolean {
    return this.pending !== null;
  }

  cancel(): void {
    if (this.pending !== null) this.clock.clearTimeout(this.pending);
    this.pending = null;
  }
}

// Reloads (through onReload) when the document becomes visible again,
// throttled as above. Only while enabled (the trading routes).
export function useVisibilityReload(enabled: boolean, onReload: () => void, windowMs = VISIBILITY_RELOAD_THROTTLE_MS) {
  const cb = useRef(onReload);
  cb.current = onReload;
  useEffect(() => {
    if (!enabled) return;
    const throttle = new TrailingThrottle(() => {
      // A reload that comes due while hidden waits for the next return.
      if (document.visibilityState === "visible") cb.current();
    }, windowMs);
    const onChange = () => {
      if (document.visibilityState === "visible") throttle.trigger();
    };
    document.addEventListener("visibilitychange", onChange);
    return () => {
      document.removeEventListener("visibilitychange", onChange);
      throttle.cancel();
    };
  }, [enabled, windowMs]);
}

export function isVisible(): boolean {
  return typeof document === "undefined" || document.visibilityState !== "hidden";
}

// Runs fn every intervalMs while the page is visible; a return to the page
// runs it at once when a tick was missed. Stops with the component.
export function usePollWhileVisible(fn: () => void, intervalMs: number, enabled = true) {
  const cb = useRef(fn);
  cb.current = fn;
  useEffect(() => {
    if (!enabled) return;
    let timer: ReturnType<typeof setInterval> | null = null;
    let missed = false;
    const start = () => {
      if (timer === null) timer = setInterval(() => cb.current(), intervalMs);
    };
    const stop = () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
    };
    const onChange = () => {
      if (isVisible()) {
        if (missed) cb.current();
        missed = false;
        start();
      } else {
        missed = true;
        stop();
      }
    };
    if (isVisible()) start();
    document.addEventListener("visibilitychange", onChange);
    return () => {
      document.removeEventListener("visibilitychange", onChange);
      stop();
    };
  }, [intervalMs, enabled]);
}
