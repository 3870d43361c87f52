import type { ReactNode } from "react";
import { Link } from "react-router";
import { isInternal, safeHref } from "./api";

// An event body: plain text or a small Markdown subset (## headings, "- "
// and "1. " lists, blank-line paragraphs, **bold**, *italic*, [text](url)).
// Everything becomes React text nodes and elements: markup in the source is
// shown as text, never parsed as HTML, and links are followed only to this
// site or http(s)/mailto URLs.

type Block =
  | { kind: "h"; level: 2 | 3 | 4; text: string }
  | { kind: "ul" | "ol"; items: string[] }
  | { kind: "p"; lines: string[] };

export function parseBlocks(src: string): Block[] {
  const out: Block[] = [];
  let para: string[] = [];
  let list: { kind: "ul" | "ol"; items: string[] } | null = null;
  const flush = () => {
    if (para.length) out.push({ kind: "p", lines: para });
    if (list) out.push(list);
    para = [];
    list = null;
  };
  for (const raw of src.replace(/\r\n?/g, "\n").split("\n")) {
    const line = raw.trimEnd();
    const h = /^(#{1,4})\s+(.*)$/.exec(line);
    const ul = /^\s*[-*]\s+(.*)$/.exec(line);
    const ol = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (line.trim() === "") {
      flush();
    } else if (h) {
      flush();
      // # is the page's own title: body headings start one level below it.
      out.push({ kind: "h", level: Math.min(4, Math.max(2, h[1]!.length + 1)) as 2 | 3 | 4, text: h[2]! });
    } else if (ul || ol) {
      const kind = ul ? "ul" : "ol";
      if (para.length || (list && list.kind !== kind)) flush();
      list ??= { kind, items: [] };
      list.items.push((ul ?? ol)![1]!);
    } else if (list) {
      // A line under a list item continues it.
      list.items[list.items.length - 1] += " " + line.trim();
    } else {
      para.push(line);
    }
  }
  flush();
  return out;
}

const INLINE = /\*\*(.+?)\*\*|\*(.+?)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;

export function renderInline(text: string, key = "i"): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let n = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const k = `${key}-${n++}`;
    if (m[1] !== undefined) out.push(<strong key={k}>{renderInline(m[1], k)}</strong>);
    else if (m[2] !== undefined) out.push(<em key={k}>{renderInline(m[2], k)}</em>);
    else {
      const href = safeHref(m[4]!);
      if (!href) out.push(m[3]!);
      else if (isInternal(href))
        out.push(
          <Link key={k} to={href}>
            {m[3]}
          </Link>,
        );
      else
        out.push(
          <a key={k} href={href} target="_blank" rel="noopener noreferrer">
            {m[3]}
          </a>,
        );
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

export function Markdown({ source }: { source: string }) {
  return (
    <div className="content-body" data-testid="event-body">
      {parseBlocks(source).map((b, i) => {
        const k = `b${i}`;
        switch (b.kind) {
          case "h": {
            const H = `h${b.level}` as const;
            return <H key={k}>{renderInline(b.text, k)}</H>;
          }
          case "ul":
          case "ol": {
            const L = b.kind;
            return (
              <L key={k}>
                {b.items.map((it, j) => (
                  <li key={j}>{renderInline(it, `${k}-${j}`)}</li>
                ))}
              </L>
            );
          }
          default:
            return (
              <p key={k}>
                {b.lines.map((l, j) => (
                  <span key={j}>
                    {j > 0 ? <br /> : null}
                    {renderInline(l, `${k}-${j}`)}
                  </span>
                ))}
              </p>
            );
        }
      })}
    </div>
  );
}
