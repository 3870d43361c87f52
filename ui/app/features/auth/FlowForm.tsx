import { useLingui } from "@lingui/react/macro";
import type { UiNode, UiNodeInputAttributes, UiText } from "@ory/client-fetch";
import { useState, type FormEvent, type ReactNode } from "react";
import type { Flow } from "./kratos";
import { useKratosText } from "./messages";

// One renderer for Kratos' UI nodes: inputs (the hidden csrf_token among
// them), submit buttons, the TOTP QR image and secret, recovery codes, links
// and messages, every text through Lingui.

type Attrs = Record<string, unknown> & { node_type: string };
const attrs = (n: UiNode) => n.attributes as unknown as Attrs;

export function isInput(n: UiNode): boolean {
  return attrs(n).node_type === "input";
}

export function inputName(n: UiNode): string | undefined {
  return isInput(n) ? (attrs(n).name as string) : undefined;
}

export function isSubmit(n: UiNode): boolean {
  const a = attrs(n);
  return a.node_type === "input" && (a.type === "submit" || a.type === "button");
}

// The value of the flow's csrf_token node.
export function csrfToken(flow: Flow): string {
  for (const n of flow.ui.nodes) {
    if (inputName(n) === "csrf_token") return String(attrs(n).value ?? "");
  }
  return "";
}

// The flow's hidden inputs (csrf_token, and any state Kratos keeps in the
// form) by name.
export function hiddenValues(flow: Flow): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of flow.ui.nodes) {
    const a = attrs(n);
    if (a.node_type === "input" && a.type === "hidden" && a.value !== undefined && a.value !== null) out[a.name as string] = String(a.value);
  }
  return out;
}

function flatten(v: Record<string, unknown>, prefix = "", out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [k, x] of Object.entries(v)) {
    const name = prefix ? `${prefix}.${k}` : k;
    if (x !== null && typeof x === "object" && !Array.isArray(x)) flatten(x as Record<string, unknown>, name, out);
    else out[name] = x;
  }
  return out;
}

// The body a screen's own form submits: the flow's hidden inputs, then the
// screen's values (nested, like Kratos' body; a screen's value wins).
export function flowBody(flow: Flow, values: Record<string, unknown>): Record<string, unknown> {
  return toBody({ ...hiddenValues(flow), ...flatten(values) });
}

// The initial values of a flow's inputs (not the submit buttons).
export function initialValues(flow: Flow): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const n of flow.ui.nodes) {
    const a = attrs(n);
    if (a.node_type !== "input" || isSubmit(n)) continue;
    const v = a.value;
    if (a.type === "checkbox") out[a.name as string] = v === true;
    else if (v !== undefined && v !== null) out[a.name as string] = String(v);
  }
  return out;
}

// Flat form names to Kratos' body: "traits.email" -> {traits: {email}}.
export function toBody(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(values)) {
    const path = name.split(".");
    let cur = out;
    for (const p of path.slice(0, -1)) {
      if (!cur[p] || typeof cur[p] !== "object") cur[p] = {};
      cur = cur[p] as Record<string, unknown>;
    }
    cur[path[path.length - 1]!] = v;
  }
  return out;
}

export function Messages({ messages, testId }: { messages: UiText[]; testId?: string }) {
  const tr = useKratosText();
  if (messages.length === 0) return null;
  return (
    <ul className="auth-messages" data-testid={testId}>
      {messages.map((m, i) => (
        <li
          key={`${m.id}-${i}`}
          className={`auth-message auth-message--${m.type}`}
          role={m.type === "error" ? "alert" : "status"}
          data-message-id={m.id}
        >
          {tr(m)}
        </li>
      ))}
    </ul>
  );
}

export function FlowMessages({ flow }: { flow: Flow }) {
  return <Messages messages={flow.ui.messages ?? []} testId="flow-messages" />;
}

type NodeProps = {
  node: UiNode;
  value: string | boolean | undefined;
  onChange: (name: string, v: string | boolean) => void;
  busy?: boolean;
  label?: string;
};

function nodeId(name: string): string {
  return `node-${name.replace(/[^a-zA-Z0-9_-]/g, "-")}`;
}

export function NodeView({ node, value, onChange, busy, label }: NodeProps) {
  const tr = useKratosText();
  const { t } = useLingui();
  const a = attrs(node);
  const messages = node.messages ?? [];
  const metaLabel = node.meta?.label ? tr(node.meta.label) : undefined;
  switch (a.node_type) {
    case "img": {
      // The TOTP QR code (a data: URL Kratos generates).
      const src = String(a.src ?? "");
      if (!src.startsWith("data:image/")) return null;
      return (
        <figure className="auth-qr">
          <img src={src} width={Number(a.width) || 256} height={Number(a.height) || 256} alt={metaLabel ?? t`Authenticator app QR code`} data-testid="totp-qr" />
        </figure>
      );
    }
    case "text": {
      const text = a.text as UiText & { context?: { secrets?: UiText[] } };
      // The recovery codes come as a list in the context.
      const secrets = text?.context?.secrets;
      if (Array.isArray(secrets)) {
        return (
          <div className="auth-field">
            {metaLabel ? <p className="auth-label">{metaLabel}</p> : null}
            <ul className="auth-codes" data-testid="lookup-secrets">
              {secrets.map((s, i) => (
                <li key={i}>
                  <code>{tr(s)}</code>
                </li>
              ))}
            </ul>
          </div>
        );
      }
      // 1050006: the TOTP secret itself.
      const id = String(a.id ?? "");
      return (
        <div className="auth-field">
          {metaLabel ? <p className="auth-label">{metaLabel}</p> : null}
          <code className="auth-secret" data-testid={id === "totp_secret_key" ? "totp-secret" : `text-${id}`}>
            {text?.id === 1050006 ? text.text : text ? tr(text) : ""}
          </code>
        </div>
      );
    }
    case "a":
      return (
        <a className="button" href={String(a.href ?? "#")}>
          {a.title ? tr(a.title as UiText) : metaLabel}
        </a>
      );
    case "input": {
      const ia = a as unknown as UiNodeInputAttributes;
      const name = ia.name;
      const text = label ?? metaLabel ?? name;
      if (ia.type === "hidden") {
        return <input type="hidden" name={name} value={String(value ?? ia.value ?? "")} readOnly />;
      }
      if (ia.type === "submit" || ia.type === "button") {
        return (
          <button
            type="submit"
            className={`button ${ia.name === "method" ? "button--primary" : ""}`}
            name={name}
            value={String(ia.value ?? "")}
            disabled={busy || ia.disabled}
            data-testid={`submit-${name}-${String(ia.value ?? "")}`}
          >
            {text}
          </button>
        );
      }
      const id = nodeId(name);
      const errId = messages.length ? `${id}-msg` : undefined;
      if (ia.type === "checkbox") {
        return (
          <div className="auth-field auth-field--check">
            <label htmlFor={id}>
              <input id={id} type="checkbox" name={name} checked={value === true} disabled={busy || ia.disabled} onChange={(e) => onChange(name, e.target.checked)} />{" "}
              {text}
            </label>
            <Messages messages={messages} />
          </div>
        );
      }
      return (
        <div className="auth-field">
          <label htmlFor={id} className="auth-label">
            {text}
          </label>
          <input
            id={id}
            className="auth-input"
            type={ia.type === "datetime-local" ? "text" : ia.type}
            name={name}
            value={typeof value === "string" ? value : ""}
            required={ia.required}
            disabled={busy || ia.disabled}
            autoComplete={ia.autocomplete}
            inputMode={name.endsWith("code") || name === "totp_code" ? "numeric" : undefined}
            aria-invalid={messages.some((m) => m.type === "error") || undefined}
            aria-describedby={errId}
            onChange={(e) => onChange(name, e.target.value)}
          />
          <div id={errId}>
            <Messages messages={messages} />
          </div>
        </div>
      );
    }
    default:
      return null;
  }
}

type FormProps = {
  flow: Flow;
  // Node groups shown ("default" holds csrf_token and traits); all when omitted.
  groups?: string[];
  // Input names the screen renders itself (left out here).
  exclude?: string[];
  onSubmit: (body: Record<string, unknown>) => void | Promise<void>;
  busy?: boolean;
  children?: ReactNode;
  testId?: string;
  labels?: Record<string, string>;
};

// A whole Kratos form: nodes of the chosen groups, the screen's own fields
// (children) before the buttons, and the clicked button's name/value added
// to the body (e.g. method=totp).
export function FlowForm({ flow, groups, exclude = [], onSubmit, busy, children, testId, labels = {} }: FormProps) {
  const [values, setValues] = useState<Record<string, string | boolean>>(() => initialValues(flow));
  const [flowId, setFlowId] = useState(flow.id);
  // A new flow (or the same flow re-rendered with errors) resets the fields Kratos returned.
  if (flowId !== flow.id) {
    setFlowId(flow.id);
    setValues(initialValues(flow));
  }
  const shown = flow.ui.nodes.filter((n) => {
    const name = inputName(n);
    if (name && exclude.includes(name)) return false;
    if (name === "csrf_token") return true;
    return !groups || groups.includes(n.group);
  });
  const fields = shown.filter((n) => !isSubmit(n));
  const buttons = shown.filter(isSubmit);
  const onChange = (name: string, v: string | boolean) => setValues((p) => ({ ...p, [name]: v }));
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const native = e.nativeEvent as SubmitEvent;
    const btn = native.submitter as HTMLButtonElement | null;
    const vals: Record<string, unknown> = {};
    for (const n of fields) {
      const name = inputName(n);
      if (name && values[name] !== undefined && values[name] !== "") vals[name] = values[name];
    }
    const chosen = btn?.name ? btn : null;
    if (chosen) vals[chosen.name] = chosen.value;
    else if (buttons[0]) {
      const a = attrs(buttons[0]);
      vals[a.name as string] = a.value;
    }
    void onSubmit(toBody(vals));
  };
  return (
    <form className="auth-form" onSubmit={submit} noValidate data-testid={testId}>
      {fields.map((n, i) => {
        const name = inputName(n);
        return (
          <NodeView key={`${name ?? n.type}-${i}`} node={n} value={name ? values[name] : undefined} onChange={onChange} busy={busy} label={name ? labels[name] : undefined} />
        );
      })}
      {children}
      <div className="auth-actions">
        {buttons.map((n, i) => (
          <NodeView key={`btn-${i}`} node={n} value={undefined} onChange={onChange} busy={busy} label={labels[`${inputName(n)}=${String(attrs(n).value)}`]} />
        ))}
      </div>
    </form>
  );
}
