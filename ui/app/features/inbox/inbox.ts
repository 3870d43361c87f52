// The demo inbox: Mailpit's API through the edge (/demo/inbox), where the
// demo stack delivers the e-mails and text messages Kratos sends. 404 when
// the operator turned it off.
export const INBOX_API = "/demo/inbox/api/v1";

export type InboxMessage = {
  id: string;
  from: string;
  to: string[];
  subject: string;
  created: string;
  snippet: string;
  // The one-time code in the message, when it has one.
  code?: string;
};

export type InboxResult = { status: "ok"; messages: InboxMessage[] } | { status: "off" } | { status: "error"; error: string };

type FetchFn = (input: string) => Promise<Response>;

// The code of a verification or recovery message: the first group of 6
// digits (Kratos' codes; 4 to 8 accepted).
export function extractCode(text: string): string | undefined {
  const m = /(?<![\d])(\d{6})(?![\d])/.exec(text) ?? /(?<![\d])(\d{4,8})(?![\d])/.exec(text);
  return m?.[1];
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function addr(v: unknown): string {
  if (!v || typeof v !== "object") return "";
  const o = v as Record<string, unknown>;
  return str(o.Address) || str(o.Name);
}

// Newest first.
export function parseList(body: unknown): InboxMessage[] {
  const list = body && typeof body === "object" ? (body as { messages?: unknown }).messages : undefined;
  if (!Array.isArray(list)) return [];
  return list
    .map((m: Record<string, unknown>) => ({
      id: str(m.ID),
      from: addr(m.From),
      to: Array.isArray(m.To) ? m.To.map(addr).filter(Boolean) : [],
      subject: str(m.Subject),
      created: str(m.Created),
      snippet: str(m.Snippet),
      code: extractCode(`${str(m.Subject)} ${str(m.Snippet)}`),
    }))
    .filter((m) => m.id !== "")
    .sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
}

export async function fetchInbox(f: FetchFn = (u) => globalThis.fetch(u, { credentials: "same-origin" })): Promise<InboxResult> {
  let res: Response;
  try {
    res = await f(`${INBOX_API}/messages?limit=50`);
  } catch (e) {
    return { status: "error", error: e instanceof Error ? e.message : String(e) };
  }
  if (res.status === 404) return { status: "off" };
  if (!res.ok) return { status: "error", error: `HTTP ${res.status}` };
  try {
    return { status: "ok", messages: parseList(await res.json()) };
  } catch {
    return { status: "error", error: "bad JSON" };
  }
}

// The full text of one message (for a code the snippet cut off).
export async function fetchMessageText(id: string, f: FetchFn = (u) => globalThis.fetch(u, { credentials: "same-origin" })): Promise<string> {
  const res = await f(`${INBOX_API}/message/${encodeURIComponent(id)}`);
  if (!res.ok) return "";
  const body = (await res.json()) as { Text?: unknown; Subject?: unknown };
  return `${str(body.Subject)}\n${str(body.Text)}`;
}
