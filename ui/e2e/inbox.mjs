// What the sign-in end-to-end tests need beside the browser: the codes the
// demo stack's inbox caught (Mailpit's API through the edge) and the
// authenticator's codes (RFC 6238 TOTP, computed here as an app would).
import { createHmac } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { baseURL } from "./browser.mjs";

const INBOX = `${baseURL}/demo/inbox/api/v1`;

async function getJSON(url) {
  const res = await fetch(url, { headers: { Accept: "application/json" } });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return res.json();
}

// The first 6-digit group of a message.
export function codeOf(text) {
  return /(?<!\d)(\d{6})(?!\d)/.exec(text)?.[1];
}

// Waits (bounded) for a message to `to` received at or after `since` (ms)
// whose text holds a code, and returns { code, subject, text }.
export async function waitForCode(to, since, { timeout = 60_000 } = {}) {
  const deadline = Date.now() + timeout;
  const seen = new Set();
  for (;;) {
    const { messages = [] } = await getJSON(`${INBOX}/messages?limit=50`);
    for (const m of messages) {
      if (seen.has(m.ID)) continue;
      const recipients = (m.To ?? []).map((a) => (a.Address ?? "").toLowerCase());
      if (!recipients.includes(to.toLowerCase())) continue;
      if (Date.parse(m.Created) < since - 2000) continue;
      seen.add(m.ID);
      const full = await getJSON(`${INBOX}/message/${m.ID}`);
      const text = `${full.Subject ?? ""}\n${full.Text ?? ""}`;
      const code = codeOf(text);
      if (code) return { code, subject: full.Subject ?? "", text };
    }
    if (Date.now() > deadline) throw new Error(`no code for ${to} in the demo inbox after ${timeout} ms`);
    await sleep(500);
  }
}

function base32(s) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const clean = s.replace(/[\s=]/g, "").toUpperCase();
  let bits = 0;
  let value = 0;
  const out = [];
  for (const c of clean) {
    const i = alphabet.indexOf(c);
    if (i < 0) throw new Error(`not base32: ${c}`);
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

// RFC 6238: HMAC-SHA1 over the 30-second step counter, 6 digits.
export function totp(secret, now = Date.now(), step = 30) {
  const counter = Math.floor(now / 1000 / step);
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac("sha1", base32(secret)).update(msg).digest();
  const off = mac[mac.length - 1] & 0x0f;
  const n = ((mac[off] & 0x7f) << 24) | (mac[off + 1] << 16) | (mac[off + 2] << 8) | mac[off + 3];
  return String(n % 1_000_000).padStart(6, "0");
}

// A code of a step not used before (Kratos accepts a code once per step at most in practice; waiting is cheap).
export async function freshTotp(secret, usedStep) {
  while (Math.floor(Date.now() / 30_000) === usedStep) await sleep(500);
  return { code: totp(secret), step: Math.floor(Date.now() / 30_000) };
}
