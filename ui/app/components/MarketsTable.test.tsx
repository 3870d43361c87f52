import { act, render, screen } from "@testing-library/react";
import { createRoutesStub } from "react-router";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activateLocale } from "~/i18n";
import { buildRows } from "~/lib/markets";
import { AppProviders } from "~/providers";
import { instrument, ticker } from "~/test/fixtures";
import { MarketsTable } from "./MarketsTable";

const rows = [
  ...buildRows({ slug: "binance", name: "Binance" }, null, "SWAP", [{ ...instrument("BTCUSDT", "BTC", "USDT"), tickSize: "0.10" }], [
    ticker("BTCUSDT", "65000.1", "-1.234", "2490353029.25"),
  ]),
  ...buildRows({ slug: "okx", name: "OKX" }, null, "SWAP", [{ ...instrument("ETH-USDT-SWAP", "ETH", "USDT"), tickSize: "0.01" }], [
    ticker("ETH-USDT-SWAP", "3001.5", "2.1", "12345"),
  ]),
];

// jsdom has no layout: the scroll box reports a size so the virtualizer
// renders the rows.
const sizes = { clientHeight: 600, clientWidth: 1000, offsetHeight: 600, offsetWidth: 1000 } as const;
const saved = new Map<string, PropertyDescriptor | undefined>();
beforeAll(() => {
  for (const [k, v] of Object.entries(sizes)) {
    const proto = k.startsWith("offset") ? HTMLElement.prototype : Element.prototype;
    saved.set(k, Object.getOwnPropertyDescriptor(proto, k));
    Object.defineProperty(proto, k, {
      configurable: true,
      get(this: HTMLElement) {
        return this.dataset?.testid === "markets-scroll" ? v : 0;
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

function renderTable() {
  const Stub = createRoutesStub([
    {
      path: "/",
      Component: () => (
        <AppProviders>
          <MarketsTable rows={rows} favorites={new Set()} onToggleFavorite={() => undefined} />
        </AppProviders>
      ),
    },
  ]);
  return render(<Stub initialEntries={["/"]} />);
}

function cells(symbol: string) {
  const row = document.querySelector<HTMLElement>(`[data-symbol="${symbol}"]`)!;
  const cell = (c: string) => row.querySelector<HTMLElement>(`.markets-cell--${c}`)!;
  return { last: cell("last"), change: cell("changePct24h"), volume: cell("quoteVolume24h") };
}

describe("Markets table formatting", () => {
  it("formats prices on tick decimals, change with two decimals and sign, volume compact with the full value", async () => {
    renderTable();
    await screen.findByTestId("markets-table");
    const btc = cells("BTCUSDT");
    expect(btc.last.textContent).toBe("65,000.1");
    expect(btc.change.textContent).toBe("-1.23%");
    expect(btc.change.className).toContain("down");
    expect(btc.volume.textContent).toBe("2.49B");
    expect(btc.volume.title).toBe("2,490,353,029.25");
    const eth = cells("ETH-USDT-SWAP");
    expect(eth.last.textContent).toBe("3,001.50");
    expect(eth.change.textContent).toBe("+2.10%");
    expect(eth.volume.textContent).toBe("12.3K");
  });

  it("follows the page's language", async () => {
    renderTable();
    await screen.findByTestId("markets-table");
    await act(() => activateLocale("ja"));
    expect(cells("BTCUSDT").volume.textContent).toBe("24.9億");
    expect(cells("BTCUSDT").change.textContent).toBe("-1.23%");
  });
});
