import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { createRoutesStub } from "react-router";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AppProviders } from "~/providers";
import { instrument } from "~/test/fixtures";
import type { Instrument, Ticker } from "./api";
import { FAVORITES_KEY } from "~/lib/favorites";
import { PairList } from "./PairList";

const N = 5000;
const instruments = Array.from({ length: N }, (_, i) => instrument(`C${String(i).padStart(4, "0")}USDT`, `C${String(i).padStart(4, "0")}`, "USDT")) as Instrument[];

function renderList(current: string) {
  const Stub = createRoutesStub([
    {
      path: "/futures/:exchange/:symbol",
      Component: () => (
        <AppProviders>
          <PairList area="futures" exchange="binance" marketType="SWAP" current={current} instruments={instruments} tickers={new Map<string, Ticker>()} />
        </AppProviders>
      ),
    },
  ]);
  return render(<Stub initialEntries={[`/futures/binance/${current}`]} />);
}

// jsdom has no layout: the list's scroll box reports a size so the
// virtualizer renders the rows in view.
const sizes = { clientHeight: 520, clientWidth: 220, offsetHeight: 520, offsetWidth: 220, scrollHeight: N * 26 } as const;
const saved = new Map<string, PropertyDescriptor | undefined>();
beforeAll(() => {
  for (const [k, v] of Object.entries(sizes)) {
    const proto = k.startsWith("offset") ? HTMLElement.prototype : Element.prototype;
    saved.set(k, Object.getOwnPropertyDescriptor(proto, k));
    Object.defineProperty(proto, k, {
      configurable: true,
      get(this: HTMLElement) {
        return this.dataset?.testid === "pair-scroll" ? v : 0;
      },
    });
  }
});
afterAll(() => {
  for (const [k, d] of saved) {
    const proto = k.startsWith("offset") ? HTMLElement.prototype : Element.prototype;
    if (d) Object.defineProperty(proto, k, d);
    else delete (proto as unknown as Record<string, unknown>)[k];
  }
});

const symbols = () => [...document.querySelectorAll(".pair-list .pair-symbol")].map((e) => e.textContent);

describe("PairList", () => {
  beforeEach(() => localStorage.clear());

  it("keeps only the rows in view in the page, for thousands of pairs", async () => {
    renderList("C0000USDT");
    await screen.findByText("C0000USDT");
    const list = screen.getByTestId("pair-list");
    expect(list.dataset.count).toBe(String(N));
    const shown = symbols();
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.length).toBeLessThan(80);
    // The list is as tall as every row together, so the scrollbar is true.
    expect(list.style.height).toBe(`${N * 26}px`);
  });

  it("scrolls the current pair into view, even far down the list", async () => {
    // jsdom does not scroll: record where the list is asked to scroll, then
    // apply it as a browser would.
    const tops: number[] = [];
    const proto = Element.prototype as unknown as { scrollTo?: unknown };
    const before = proto.scrollTo;
    proto.scrollTo = function (this: HTMLElement, o: ScrollToOptions) {
      tops.push(o.top ?? 0);
      Object.defineProperty(this, "scrollTop", { configurable: true, value: o.top ?? 0 });
      this.dispatchEvent(new Event("scroll"));
    };
    try {
      renderList("C4200USDT");
      await waitFor(() => expect(tops.length).toBeGreaterThan(0));
      const top = tops[tops.length - 1]!;
      expect(top).toBeGreaterThanOrEqual(4201 * 26 - 520);
      expect(top).toBeLessThanOrEqual(4200 * 26);
      await waitFor(() => expect(symbols()).toContain("C4200USDT"));
      expect(document.querySelector('.pair-list a[aria-current="page"] .pair-symbol')?.textContent).toBe("C4200USDT");
      expect(symbols()).not.toContain("C0000USDT");
    } finally {
      proto.scrollTo = before;
    }
  });

  it("searches all pairs and filters favorites", async () => {
    renderList("C0000USDT");
    await screen.findByText("C0000USDT");
    fireEvent.change(screen.getByRole("searchbox", { name: "Search pairs" }), { target: { value: "c4999" } });
    await waitFor(() => expect(symbols()).toEqual(["C4999USDT"]));
    fireEvent.click(screen.getByRole("button", { name: "Add C4999USDT to favorites" }));
    expect(JSON.parse(localStorage.getItem(FAVORITES_KEY) ?? "[]")).toEqual(["binance:SWAP:C4999USDT"]);
    fireEvent.change(screen.getByRole("searchbox", { name: "Search pairs" }), { target: { value: "" } });
    fireEvent.click(screen.getByRole("button", { name: "Favorites" }));
    await waitFor(() => expect(symbols()).toEqual(["C4999USDT"]));
    fireEvent.click(screen.getByRole("button", { name: "Remove C4999USDT from favorites" }));
    await screen.findByText("No favorites yet.");
  });
});
