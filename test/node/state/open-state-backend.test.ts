import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";

const RECORDER = resolve("test/support/record-packages.mjs");
let spawned: Spawned | undefined;

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

/** The packages `node dist/node.js` imports on its main thread until it listens, with `state` in its configuration. */
async function packagesLoaded(state: Record<string, unknown>): Promise<Set<string>> {
  const folder = await mkdtemp(join(tmpdir(), "webhook-channel-packages-"));
  const record = join(folder, "packages.txt");
  const config = await writeTempConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    ...state,
  });
  spawned = spawnNode("dist/node.js", ["--config", config], {
    WEBHOOK_SECRET: "packages-secret-abcdef",
    NODE_OPTIONS: `--import=${RECORDER}`,
    RECORD_PACKAGES_FILE: record,
  });
  await listeningUrl(spawned);
  return new Set((await readFile(record, "utf8")).split("\n").filter((line) => line !== ""));
}

describe("which database drivers a service loads", () => {
  it("in memory, neither pg nor better-sqlite3", async () => {
    const loaded = await packagesLoaded({});
    expect(loaded).toContain("hono");
    expect(loaded).not.toContain("pg");
    expect(loaded).not.toContain("better-sqlite3");
  });

  it("on SQLite, better-sqlite3 and not pg", async () => {
    const stateDir = join(await mkdtemp(join(tmpdir(), "webhook-channel-packages-state-")), "state");
    const loaded = await packagesLoaded({ state_dir: stateDir });
    expect(loaded).toContain("better-sqlite3");
    expect(loaded).not.toContain("pg");
  });
});
