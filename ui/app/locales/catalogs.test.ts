// @vitest-environment node
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const uiDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const run = promisify(execFile);

type Entry = { msgid: string; msgstr: string };

// Reads msgid/msgstr pairs from a .po file (strings may span several lines).
function parsePo(text: string): Entry[] {
  const entries: Entry[] = [];
  let cur: Partial<Entry> = {};
  let field: keyof Entry | null = null;
  const unquote = (s: string) => JSON.parse(s) as string;
  const flush = () => {
    if (cur.msgid !== undefined && cur.msgid !== "") entries.push({ msgid: cur.msgid, msgstr: cur.msgstr ?? "" });
    cur = {};
    field = null;
  };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const m = /^(msgid|msgstr)\s+(".*")$/.exec(line);
    if (m) {
      if (m[1] === "msgid") flush();
      field = m[1] as keyof Entry;
      cur[field] = unquote(m[2]!);
    } else if (line.startsWith('"') && field) {
      cur[field] = (cur[field] ?? "") + unquote(line);
    } else if (line === "") {
      field = null;
    }
  }
  flush();
  return entries;
}

async function catalog(dir: string, locale: string): Promise<Entry[]> {
  return parsePo(await readFile(path.join(dir, locale, "messages.po"), "utf8"));
}

const committed = path.join(uiDir, "app/locales");

describe("translation catalogs", () => {
  it("have a Japanese translation for every English message", async () => {
    const en = await catalog(committed, "en");
    const ja = new Map((await catalog(committed, "ja")).map((e) => [e.msgid, e.msgstr]));
    expect(en.length).toBeGreaterThan(10);
    const missing = en.filter((e) => !ja.get(e.msgid)?.trim()).map((e) => e.msgid);
    expect(missing, "untranslated ja messages (run npm run i18n:extract, then translate)").toEqual([]);
  });

  it("keep placeholders intact in Japanese", async () => {
    const ja = await catalog(committed, "ja");
    for (const e of ja) {
      const vars = (s: string) => [...s.matchAll(/\{(\w+)/g)].map((m) => m[1]).sort();
      expect(vars(e.msgstr), e.msgid).toEqual(vars(e.msgid));
    }
  });

  describe("match the source code", () => {
    let tmp = "";
    beforeAll(async () => {
      tmp = await mkdtemp(path.join(tmpdir(), "exhub-i18n-"));
      const config = {
        rootDir: uiDir,
        sourceLocale: "en",
        locales: ["en", "ja"],
        catalogs: [
          {
            path: path.join(tmp, "{locale}", "messages"),
            include: ["<rootDir>/app"],
            exclude: ["**/*.test.*", "**/node_modules/**"],
          },
        ],
        format: "po",
      };
      const configPath = path.join(tmp, "lingui.config.json");
      await writeFile(configPath, JSON.stringify(config));
      await run(path.join(uiDir, "node_modules/.bin/lingui"), ["extract", "--config", configPath], { cwd: uiDir });
    }, 60_000);
    afterAll(async () => {
      if (tmp) await rm(tmp, { recursive: true, force: true });
    });

    it("contain every message the code uses and no stale ones", async () => {
      const fresh = (await catalog(tmp, "en")).map((e) => e.msgid).sort();
      const ours = (await catalog(committed, "en")).map((e) => e.msgid).sort();
      expect(fresh.length).toBeGreaterThan(10);
      expect(ours, "catalogs are out of date: run npm run i18n:extract").toEqual(fresh);
    });
  });
});
