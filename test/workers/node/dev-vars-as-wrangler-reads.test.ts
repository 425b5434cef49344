/**
 * `config check --preflight` reads `.dev.vars` to confirm what `wrangler dev` will give the Worker.
 * It must read the file as wrangler does (wrangler's own `getVarsForDev`, which `wrangler dev` calls).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { unstable_getVarsForDev } from "wrangler";
import { runConfigCheck } from "../../../src/cli/config-check.js";
import { parseDevVars } from "../../../src/cli/read-dev-vars.js";

const SECRET = "g1o5TLTIVu6aUoSgF_Nw_YL6O39vElejfaFdGBi5KBQ";
let dir = "";

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "webhook-channel-dev-vars-hash-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function wranglerReads(): Record<string, string> {
  const vars = unstable_getVarsForDev(join(dir, "wrangler.toml"), undefined, {}, undefined, true) as Record<
    string,
    { value: string }
  >;
  return Object.fromEntries(Object.entries(vars).map(([name, binding]) => [name, binding.value]));
}

it("reads an unquoted value with a # as wrangler dev does", async () => {
  const text = `WEBHOOK_SECRET=${SECRET}#tail\nADMIN_SECRET=#${SECRET}\n`;
  await writeFile(join(dir, ".dev.vars"), text);
  expect(Object.fromEntries(parseDevVars(text))).toEqual(wranglerReads());
});

it("does not confirm a secret that wrangler dev gives the Worker empty", async () => {
  await writeFile(
    join(dir, "config.json"),
    JSON.stringify({
      channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/r" } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    }),
  );
  await writeFile(join(dir, ".dev.vars"), `WEBHOOK_SECRET=#${SECRET}\n`);
  expect(wranglerReads().WEBHOOK_SECRET).toBe(""); // what the Worker gets: it answers every request 500 config_invalid
  let out = "";
  const status = await runConfigCheck(join(dir, "config.json"), true, {
    env: {},
    out: (text) => {
      out += text;
    },
    err: () => {},
  });
  expect(out).not.toContain("OK (environment confirmed)");
  expect(status).toBe(1);
});
