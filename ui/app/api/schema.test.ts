// @vitest-environment node
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const here = path.dirname(fileURLToPath(import.meta.url));
const uiDir = path.resolve(here, "../..");

it("schema.d.ts is generated from the committed openapi.json", async () => {
  const tmp = await mkdtemp(path.join(tmpdir(), "exhub-api-"));
  try {
    const out = path.join(tmp, "schema.d.ts");
    await promisify(execFile)(
      path.join(uiDir, "node_modules/.bin/openapi-typescript"),
      [path.join(here, "openapi.json"), "-o", out],
      { cwd: uiDir },
    );
    const fresh = await readFile(out, "utf8");
    const committed = await readFile(path.join(here, "schema.d.ts"), "utf8");
    expect(committed, "app/api/schema.d.ts is stale: run npm run gen:api").toBe(fresh);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}, 60_000);
