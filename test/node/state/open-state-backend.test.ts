import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { configDocument } from "../../support/configs.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const RECORDER = resolve("test/support/record-packages.mjs");
let spawned: Spawned | undefined;
const folders: string[] = [];

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

async function tempFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "webhook-channel-packages-"));
  folders.push(folder);
  return folder;
}

/**
 * The packages a service imports until it listens (and, with `delivery_thread`, until its
 * delivery thread is up), with `extra` in its configuration, started as `command` starts it.
 */
async function packagesLoaded(
  extra: Record<string, unknown>,
  command: readonly string[] = ["dist/node.js"],
): Promise<Set<string>> {
  const record = join(await tempFolder(), "packages.txt");
  const config = await writeTempConfig(configDocument({ bind: "127.0.0.1:0" }, extra));
  const [script = "dist/node.js", ...args] = command;
  spawned = spawnNode(script, [...args, "--config", config], {
    WEBHOOK_SECRET: "packages-secret-abcdef",
    NODE_OPTIONS: `--import=${RECORDER}`,
    RECORD_PACKAGES_FILE: record,
  });
  const url = await listeningUrl(spawned);
  // Ready once the delivery thread, when there is one, has started its consumer.
  await waitFor(async () => (await fetch(new URL("/readyz", url))).status === 200 || undefined, 10_000, "ready");
  return new Set((await readFile(record, "utf8")).split("\n").filter((line) => line !== ""));
}

describe("which database drivers a service loads", () => {
  it("in memory, neither pg nor better-sqlite3", async () => {
    const loaded = await packagesLoaded({});
    expect(loaded).toContain("hono");
    expect(loaded).not.toContain("pg");
    expect(loaded).not.toContain("better-sqlite3");
  });

  it("in memory with delivery_thread, neither, in either thread", async () => {
    const loaded = await packagesLoaded({ delivery_thread: true });
    expect(loaded).toContain("undici");
    expect(loaded).not.toContain("pg");
    expect(loaded).not.toContain("better-sqlite3");
  });

  it("started as `webhook-channel serve`, neither", async () => {
    const loaded = await packagesLoaded({}, ["dist/cli.js", "serve"]);
    expect(loaded).toContain("hono");
    expect(loaded).not.toContain("pg");
    expect(loaded).not.toContain("better-sqlite3");
  });

  it("on SQLite, better-sqlite3 and not pg", async () => {
    const loaded = await packagesLoaded({ state_dir: join(await tempFolder(), "state") });
    expect(loaded).toContain("better-sqlite3");
    expect(loaded).not.toContain("pg");
  });
});
