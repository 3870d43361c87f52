import type { UiText } from "@ory/client-fetch";
import type { FieldValues, Path, UseFormReturn } from "react-hook-form";
import { inputName } from "./FlowForm";
import type { Flow, FlowResult } from "./kratos";
import { useKratosText } from "./messages";

// Kratos node names → the form's field names, e.g. { password: "password", "traits.email": "email" }.
export type NodeFields = Record<string, string>;

// The flow's messages no field shows: the flow's own, and those of nodes the
// form has no field for.
export function unplacedMessages(flow: Flow, fields: NodeFields): UiText[] {
  return [
    ...(flow.ui.messages ?? []),
    ...flow.ui.nodes.filter((n) => !(inputName(n) ?? "") || !fields[inputName(n)!]).flatMap((n) => n.messages ?? []),
  ];
}

// Puts the error messages Kratos attached to a node on the form's field for
// it (translated), through the kit's server-error path (setError); returns
// whether any landed.
export function useNodeErrors() {
  const tr = useKratosText();
  return <T extends FieldValues>(form: Pick<UseFormReturn<T, unknown, unknown>, "setError">, flow: Flow, fields: NodeFields): boolean => {
    let placed = false;
    for (const n of flow.ui.nodes) {
      const field = fields[inputName(n) ?? ""];
      const errors = (n.messages ?? []).filter((m) => m.type === "error");
      if (!field || errors.length === 0) continue;
      form.setError(field as Path<T>, { type: "server", message: errors.map(tr).join(" ") }, { shouldFocus: !placed });
      placed = true;
    }
    return placed;
  };
}

// What a screen does with a submission that did not go through: Kratos'
// messages for its fields go on them, a flow with messages is shown, an
// expired flow or a failed CSRF check starts a new one (and says so), and
// anything else is left for <ResultAlert> through setResult.
export function useFlowFailure(recover: (r: FlowResult) => Promise<boolean>, setResult: (r: FlowResult) => void) {
  const nodeErrors = useNodeErrors();
  return async <T extends FieldValues>(form: Pick<UseFormReturn<T, unknown, unknown>, "setError">, r: FlowResult, fields: NodeFields): Promise<void> => {
    if (r.kind === "flow") nodeErrors(form, r.flow, fields);
    if (!(await recover(r)) || r.kind !== "flow") setResult(r);
  };
}
