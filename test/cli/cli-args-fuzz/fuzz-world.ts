import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeCursor } from "../../../src/core/admin/dead-letter-cursor.js";
import { generateSigningKeyPair } from "../../../src/core/outbound/signing-key.js";
import { openStateDb } from "../../../src/node/state/sqlite/sqlite-state.js";
import { openTimelineDb } from "../../../src/node/state/sqlite/timeline-db.js";
import { configDocument } from "../../support/configs.js";
import { freePort } from "../../support/free-port.js";
import { SECRET_MARK } from "./fuzz-secrets.js";

/** The configuration files the fuzz gives `--config`, each for one way the CLI's sources end. */
export interface WorldFiles {
  /** `./config.json` of the working directory: valid, without state_dir (the default path). */
  readonly cwdDefault: string;
  /** Valid, without state_dir or admin: offline commands say nothing is kept on disk. */
  readonly valid: string;
  /** Valid, with admin on: offline commands print the `--url` command. */
  readonly admin: string;
  /** state_dir with an empty state and timeline: list exits 0, the rest find nothing. */
  readonly state: string;
  /** state_dir with no state file: exits 1, creating nothing. */
  readonly emptyState: string;
  /** postgres_url_env PG_URL, which points at a port nothing listens on (or is unset). */
  readonly postgres: string;
  /** The timeline turned off. */
  readonly timelineOff: string;
  /** Beside a `.dev.vars` holding the planted secret, for `config check --preflight`. */
  readonly devVars: string;
  /** Problems: a bind that is no address and an unknown key. */
  readonly invalid: string;
  /** Not JSON. */
  readonly notJson: string;
  /** A folder where a file is expected. */
  readonly folder: string;
  /** Nothing there. */
  readonly missing: string;
}

/** Where the fuzz runs: a temporary folder (its working directory meanwhile), files, a dead port, keys. */
export interface World {
  readonly root: string;
  /** A loopback port that was free at the start and that nothing listens on. */
  readonly deadPort: number;
  readonly files: WorldFiles;
  /** A usable `whsk_` key: `public-key` prints its public half, never the key itself. */
  readonly secretKey: string;
  /** Files for `<NAME>_FILE`: the usable key, and a broken key holding the planted secret. */
  readonly keyFile: string;
  readonly badKeyFile: string;
  /** A cursor `messages list` accepts. */
  readonly cursor: string;
  /** Every value nothing printed may hold, by name: the planted secret and the usable key. */
  readonly secrets: readonly (readonly [name: string, value: string])[];
  /** Restores the working directory and removes the folder. */
  close(): Promise<void>;
}

async function writeJson(path: string, document: unknown): Promise<string> {
  await writeFile(path, JSON.stringify(document, null, 2));
  return path;
}

/**
 * Makes the world and moves the working directory into it, so that the default
 * `./config.json` and its `.dev.vars` are the fuzz's, not the checkout's.
 */
export async function createWorld(): Promise<World> {
  const root = await mkdtemp(join(tmpdir(), "cli-args-fuzz-"));
  const deadPort = await freePort();
  const outbound = { outbound_url: `http://127.0.0.1:${deadPort}/replies` };
  const at = (...parts: string[]) => join(root, ...parts);
  for (const folder of ["state", "empty-state", "dev-vars", "folder.json", "store", "void"]) {
    await mkdir(at(folder), { recursive: true });
  }
  // A state and a timeline as a stopped service leaves them, with nothing in them.
  openStateDb(at("store")).close();
  openTimelineDb(at("store")).close();
  const devVars = await writeJson(at("dev-vars", "config.json"), configDocument(outbound));
  await writeFile(
    at("dev-vars", ".dev.vars"),
    `WEBHOOK_SECRET=${SECRET_MARK}\nCONFIG_JSON='{"channels":[{"type":"webhook","token_env":"HOOK_KEY","webhook":{"outbound_url":"http://127.0.0.1:${deadPort}/"}}],"routes":[{"channel":"webhook","brain":"echo"}]}'\nHOOK_KEY=${SECRET_MARK}\n`,
  );
  const notJson = at("not-json.json");
  await writeFile(notJson, `{ "channels": [ ${SECRET_MARK.length}`);
  const files: WorldFiles = {
    cwdDefault: await writeJson(at("config.json"), configDocument(outbound)),
    valid: await writeJson(at("valid.json"), configDocument(outbound)),
    admin: await writeJson(at("admin.json"), configDocument(outbound, { admin: { token_env: "OTHER_ADMIN" } })),
    state: await writeJson(at("state", "config.json"), configDocument(outbound, { state_dir: at("store") })),
    emptyState: await writeJson(at("empty-state.json"), configDocument(outbound, { state_dir: at("void") })),
    postgres: await writeJson(at("postgres.json"), configDocument(outbound, { postgres_url_env: "PG_URL" })),
    timelineOff: await writeJson(
      at("timeline-off.json"),
      configDocument(outbound, { state_dir: at("store"), timeline: { retention_hours: 0 } }),
    ),
    devVars,
    invalid: await writeJson(at("invalid.json"), configDocument({ ...outbound, bind: "nope", bnd: 1 })),
    notJson,
    folder: at("folder.json"),
    missing: at("no-such-folder", "config.json"),
  };
  const { secretKey } = await generateSigningKeyPair();
  const keyFile = at("signing.key");
  await writeFile(keyFile, `${secretKey}\n`);
  const badKeyFile = at("bad-signing.key");
  await writeFile(badKeyFile, `whsk_${SECRET_MARK}\n`);
  const home = process.cwd();
  process.chdir(root);
  return {
    root,
    deadPort,
    files,
    secretKey,
    keyFile,
    badKeyFile,
    cursor: encodeCursor({ diedAt: 1_795_752_885_325, id: "6dbb0000-0000-4000-8000-000000000000" }),
    secrets: [
      [`the planted ${SECRET_MARK}`, SECRET_MARK],
      ["the usable whsk_ key", secretKey],
    ],
    async close() {
      process.chdir(home);
      await rm(root, { recursive: true, force: true });
    },
  };
}
