// Fails when src/workers/worker-configuration.d.ts (the Workers `Env`, generated from
// wrangler.toml) is stale. It runs the command of package.json's "types" script again, into a
// temporary file beside the real one (the generated imports are relative to the file's folder),
// and compares the two. Offline and quick: wrangler only reads wrangler.toml here; its banner
// and update check are off, and so are metrics. `npm run lint` runs it.
//
// The file is not at wrangler's default path (./worker-configuration.d.ts) on purpose: there
// `wrangler dev` compares it with types of its own making (which count the secrets of the
// developer's .dev.vars, and the runtime's) and says "Your types might be out of date. Re-run
// `wrangler types`", which would write the runtime's 13,000 lines over it. This check, which
// says `npm run types`, is the one that counts.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const TYPES_FILE = "src/workers/worker-configuration.d.ts";
const PREFIX = "wrangler types ";

function fail(message) {
  console.error(`check-worker-types: ${message}`);
  process.exit(1);
}

const command = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts?.types;
if (typeof command !== "string" || !command.startsWith(`${PREFIX}${TYPES_FILE} `) || /["'`$\\|&;<>]/.test(command)) {
  fail(`package.json's "types" script should be a plain "${PREFIX}${TYPES_FILE} <options>" command`);
}
const options = command.slice(`${PREFIX}${TYPES_FILE} `.length).trim().split(/\s+/);

let checkedIn;
try {
  checkedIn = readFileSync(join(root, TYPES_FILE), "utf8");
} catch {
  fail(`${TYPES_FILE} is missing: run npm run types`);
}

// The path first: options such as --env-file take several values.
const temporary = join(dirname(TYPES_FILE), `.worker-types-check-${process.pid}.d.ts`);
const wrangler = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin/wrangler.js");
const env = { ...process.env, WRANGLER_HIDE_BANNER: "true", WRANGLER_SEND_METRICS: "false" };
// Both would change what is generated: another environment of wrangler.toml, or every
// variable of this shell as a secret.
delete env.CLOUDFLARE_ENV;
delete env.CLOUDFLARE_INCLUDE_PROCESS_ENV;

let generated;
try {
  const run = spawnSync(process.execPath, [wrangler, "types", temporary, ...options], {
    cwd: root,
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
  if (run.status !== 0) {
    process.stderr.write(run.stdout ?? "");
    process.stderr.write(run.stderr ?? "");
    fail(`wrangler types failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`})`);
  }
  // The header names the command that made the file; the real one has no path argument.
  generated = readFileSync(join(root, temporary), "utf8").replace(`${PREFIX}${temporary} `, `${PREFIX}${TYPES_FILE} `);
} finally {
  rmSync(join(root, temporary), { force: true });
}

if (generated !== checkedIn) {
  const want = generated.split("\n");
  const have = checkedIn.split("\n");
  // The header's hash always differs; a changed binding says more.
  const differs = (text, i) => text !== have[i];
  const body = want.findIndex((text, i) => i > 1 && differs(text, i));
  const line = body === -1 ? want.findIndex(differs) : body;
  const at = line === -1 ? Math.min(want.length, have.length) : line;
  console.error(
    `${TYPES_FILE}, line ${at + 1}:\n  checked in: ${have[at] ?? "(end of file)"}\n  generated:  ${want[at] ?? "(end of file)"}`,
  );
  fail(`${TYPES_FILE} does not match wrangler.toml and package.json's "types" script: run npm run types`);
}
