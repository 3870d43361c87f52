import { useCallback, useEffect, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import { createFlow, getFlow, type CreateOptions, type Flow, type FlowKind, type FlowResult } from "./kratos";

export type FlowState =
  | { status: "loading" }
  | { status: "ready"; flow: Flow }
  // Not a flow: already signed in, second factor due, rate limited, unknown error.
  | { status: "failed"; result: FlowResult };

// Loads the flow named by ?flow= or starts a new one, and starts over when
// it expired or its CSRF cookie no longer matches. The flow id is kept in
// the URL so a reload continues the same flow.
export function useFlow(kind: FlowKind, opts: CreateOptions & { param?: string } = {}) {
  const [params, setParams] = useSearchParams();
  const param = opts.param ?? "flow";
  const id = params.get(param);
  const [state, setState] = useState<FlowState>({ status: "loading" });
  const optsRef = useRef(opts);
  optsRef.current = opts;
  const restarts = useRef(0);

  const start = useCallback(async (): Promise<void> => {
    setState({ status: "loading" });
    const r = await createFlow(kind, optsRef.current);
    if (r.kind === "flow") {
      setState({ status: "ready", flow: r.flow });
      setParams(
        (p) => {
          const n = new URLSearchParams(p);
          n.set(param, r.flow.id);
          return n;
        },
        { replace: true },
      );
    } else setState({ status: "failed", result: r });
  }, [kind, param, setParams]);

  // Runs when the flow id in the URL changes (a new flow writes its id there too).
  useEffect(() => {
    let live = true;
    if (state.status === "ready" && state.flow.id === id) return;
    if (!id) {
      void start();
      return;
    }
    void getFlow(kind, id).then((r) => {
      if (!live) return;
      if (r.kind === "flow") setState({ status: "ready", flow: r.flow });
      else if ((r.kind === "expired" || r.kind === "csrf" || r.kind === "error") && restarts.current++ < 3) void start();
      else setState({ status: "failed", result: r });
    });
    return () => {
      live = false;
    };
  }, [id, kind]);

  // Shows a flow Kratos returned (errors, the next step).
  const show = useCallback((flow: Flow) => setState({ status: "ready", flow }), []);

  // For submissions: an expired flow or a CSRF failure starts a new flow; true when it did.
  const recover = useCallback(
    async (r: FlowResult): Promise<boolean> => {
      if (r.kind === "expired" || r.kind === "csrf") {
        await start();
        return true;
      }
      if (r.kind === "flow") {
        show(r.flow);
        return true;
      }
      return false;
    },
    [show, start],
  );

  return { state, restart: start, show, recover };
}
