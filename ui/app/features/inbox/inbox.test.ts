import { describe, expect, it } from "vitest";
import { extractCode, fetchInbox, parseList } from "./inbox";

const list = {
  messages: [
    { ID: "a", From: { Address: "no-reply@exhub.local" }, To: [{ Address: "u@b.co" }], Subject: "Please verify your email address", Created: "2026-11-25T10:00:00Z", Snippet: "Hi, please verify your account by entering the following code: 123456" },
    { ID: "b", From: { Address: "sms@exhub.local" }, To: [{ Address: "+819012345678" }], Subject: "Your code", Created: "2026-11-25T10:05:00Z", Snippet: "Your recovery code is 654321. It expires in 30 minutes." },
    { ID: "c", From: { Address: "x@y" }, To: [], Subject: "Hello", Created: "2026-11-25T09:00:00Z", Snippet: "no code here, call 2026" },
  ],
};

describe("demo inbox", () => {
  it("lists newest first with the code of each message", () => {
    const m = parseList(list);
    expect(m.map((x) => x.id)).toEqual(["b", "a", "c"]);
    expect(m.map((x) => x.code)).toEqual(["654321", "123456", "2026"]);
    expect(m[0]!.to).toEqual(["+819012345678"]);
  });

  it("prefers a 6-digit code", () => {
    expect(extractCode("year 2026, code 987654")).toBe("987654");
    expect(extractCode("no digits")).toBeUndefined();
    expect(extractCode("1234567890123")).toBeUndefined();
  });

  it("says the inbox is off on 404 and reports other failures", async () => {
    expect(await fetchInbox(async () => new Response("", { status: 404 }))).toEqual({ status: "off" });
    expect((await fetchInbox(async () => new Response("", { status: 502 }))).status).toBe("error");
    const ok = await fetchInbox(async (u) => {
      expect(u).toBe("/demo/inbox/api/v1/messages?limit=50");
      return new Response(JSON.stringify(list), { status: 200 });
    });
    expect(ok.status === "ok" && ok.messages.length).toBe(3);
  });
});
