import { useEffect, useRef, useState } from "react";
import { TRADING_KEY } from "~/api/trading";
import { queryClient } from "~/api/queries";
import type { StreamClient, StreamMessage } from "./stream";

// The member's account on one exchange over the private `account` channel
// (docs/stream-api.md): a snapshot, then sequenced order, fill, position and
// balance messages. Balances are kept from the stream itself (the order form's
// available balance); orders, fills and positions are shown from the REST API
// (which carries the journal ids amend and cancel need), re-read whenever the
// stream reports a change. A `resyncing` status, a sequence hole or a new
// snapshot re-reads everything.

export type StreamBalance = { asset: string; wallet?: string; total?: string; available?: string; locked?: string };

export type AccountStreamState = "connecting" | "live" | "resyncing" | "error";

const KINDS: Record<string, string[]> = {
  order: ["orders", "algo-orders", "max-order-size"],
  algoOrder: ["algo-orders"],
  fill: ["fills", "orders", "positions", "max-order-size"],
  position: ["positions", "max-order-size"],
  balance: ["max-order-size"],
};

// Coalesces re-reads: at most one per kind every REFRESH_MS while messages
// keep coming (a burst of fills re-reads once, then once more at its end).
const REFRESH_MS = 300;

export function balanceKey(b: StreamBalance): string {
  return `${b.wallet ?? ""}|${b.asset}`;
}

export type AccountStream = { state: AccountStreamState; balances: StreamBalance[]; reason?: string };

// onEvent sees every data message after the snapshot (sound alerts).
export function useAccountStream(
  stream: StreamClient | null,
  exchange: string | null,
  onEvent?: (m: StreamMessage) => void,
): AccountStream {
  const [state, setState] = useState<AccountStream>({ state: "connecting", balances: [] });
  const eventRef = useRef(onEvent);
  eventRef.current = onEvent;
  const pending = useRef(new Set<string>());
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  useEffect(() => {
    if (!stream || !exchange) return;
    let lastSeq: number | null = null;
    let balances = new Map<string, StreamBalance>();
    const flush = () => {
      timer.current = null;
      const kinds = [...pending.current];
      pending.current.clear();
      for (const k of kinds) void queryClient.invalidateQueries({ queryKey: [...TRADING_KEY, k] });
    };
    const refresh = (kinds: string[]) => {
      for (const k of kinds) pending.current.add(k);
      timer.current ??= setTimeout(flush, REFRESH_MS);
    };
    const all = ["orders", "algo-orders", "fills", "positions", "max-order-size"];
    const publish = (s: AccountStreamState, reason?: string) =>
      setState({ state: s, balances: [...balances.values()], reason });
    const sub = { channel: "account" as const, exchange };
    const off = stream.subscribe(sub, (m: StreamMessage) => {
      if (m.type === "snapshot") {
        lastSeq = typeof m.seq === "number" ? m.seq : null;
        balances = new Map();
        for (const b of (m.balances as StreamBalance[] | undefined) ?? []) if (b?.asset) balances.set(balanceKey(b), b);
        publish("live");
        refresh(all);
        return;
      }
      if (m.type === "status") {
        if (m.state === "resyncing") {
          publish("resyncing", typeof m.reason === "string" ? m.reason : undefined);
          // The next snapshot replaces state; meanwhile read it from REST.
          refresh(all);
        }
        return;
      }
      if (m.type === "error") {
        const err = m.error as { type?: string } | undefined;
        publish("error", err?.type);
        return;
      }
      const kinds = KINDS[m.type];
      if (!kinds) return;
      if (typeof m.prevSeq === "number" && lastSeq !== null && m.prevSeq !== lastSeq) {
        // A hole: start over from a fresh snapshot.
        lastSeq = null;
        stream.resubscribe(sub);
        refresh(all);
        return;
      }
      if (typeof m.seq === "number") lastSeq = m.seq;
      eventRef.current?.(m);
      if (m.type === "balance") {
        const b = m.balance as StreamBalance | undefined;
        if (b?.asset) {
          balances.set(balanceKey(b), { ...balances.get(balanceKey(b)), ...b });
          publish("live");
        }
      }
      refresh(kinds);
    });
    return () => {
      off();
      if (timer.current) clearTimeout(timer.current);
      timer.current = null;
      pending.current.clear();
      setState({ state: "connecting", balances: [] });
    };
  }, [stream, exchange]);

  return state;
}

// The available amount of an asset in the trading wallet (or any wallet
// when the exchange does not say which).
export function availableOf(balances: StreamBalance[], asset: string): string | undefined {
  const mine = balances.filter((b) => b.asset === asset);
  const trading = mine.find((b) => b.wallet === "WALLET_TYPE_TRADING") ?? mine.find((b) => !b.wallet || b.wallet === "WALLET_TYPE_UNSPECIFIED") ?? mine[0];
  return trading?.available ?? trading?.total;
}
