import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { DeadLetter } from "../../src/core/dead-letters/dead-letter.js";
import { openStateDb } from "../../src/node/state/sqlite/sqlite-state.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { buryIn, openSqliteLanes } from "../support/sqlite-lanes.js";

const DIED_AT = Date.UTC(2026, 0, 2, 3, 4, 5);
const ADMIN = "admin-secret-for-the-cli-0123456789";
let spawned: Spawned | undefined;

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

/** A letter of `channel` whose brain call died. */
const letterOf = (id: string, channel: string): DeadLetter => ({
  job: {
    message: { id, channel, receivedAt: DIED_AT - 1_000, message: { senderId: "a", conversationId: "a", text: "x" } },
    delivered: 0,
    attempts: 1,
  },
  error: { code: "brain_failed", message: "the brain answered 401", retryable: false, status: 401 },
  attempts: 1,
  diedAt: DIED_AT,
});

/** A state_dir holding a letter of "webhook" and one of "removed", and a configuration with "webhook" only. */
async function stateWithRemovedChannel(extra: Record<string, unknown> = {}): Promise<string> {
  const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
  const db = openStateDb(stateDir);
  const store = openSqliteLanes(db);
  await buryIn(store, letterOf("kept-1", "webhook"));
  await buryIn(store, letterOf("orphan-1", "removed"));
  db.close();
  return writeTempConfig({
    state_dir: stateDir,
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
    routes: [{ channel: "webhook", brain: "echo" }],
    ...extra,
  });
}

const listed = async (config: string): Promise<string> =>
  (await runCliCaptured(["dead-letters", "list", "--config", config], {})).out;

describe("dead-letters replay of a channel the configuration no longer has", () => {
  it("names the letter, keeps it listed and exits 1; the configured channel's letter is replayed", async () => {
    const config = await stateWithRemovedChannel();
    const replay = await runCliCaptured(
      ["dead-letters", "replay", "--id", "kept-1", "--id", "orphan-1", "--config", config],
      {},
    );
    expect(replay.code).toBe(1);
    expect(replay.out).toBe("replayed kept-1\n");
    expect(replay.err).toContain(`dead letter orphan-1 is of channel "removed", which ${config} does not configure`);
    const after = await listed(config);
    expect(after).toContain("orphan-1");
    expect(after).not.toContain("kept-1");
  });

  it("--all replays the configured channels' letters only", async () => {
    const config = await stateWithRemovedChannel();
    const replay = await runCliCaptured(["dead-letters", "replay", "--all", "--config", config], {});
    expect(replay.out).toBe("replayed kept-1\n");
    expect(replay.code).toBe(0);
    expect(await listed(config)).toContain("orphan-1");
  });

  it("--url: names the letter the running service refused (409) and goes on with the next id", async () => {
    const config = await stateWithRemovedChannel({ admin: { token_env: "ADMIN_SECRET" } });
    spawned = spawnNode("dist/node.js", ["--config", config], {
      WEBHOOK_SECRET: "a-webhook-secret-0123456789",
      ADMIN_SECRET: ADMIN,
    });
    const url = new URL(await listeningUrl(spawned)).origin;
    const replay = await runCliCaptured(
      ["dead-letters", "replay", "--url", url, "--id", "orphan-1", "--id", "kept-1"],
      { WEBHOOK_ADMIN_SECRET: ADMIN },
    );
    expect(replay.out).toBe("replayed kept-1\n");
    expect(replay.err).toContain('dead letter orphan-1: No channel "removed" is configured');
    expect(replay.code).toBe(1);
  });
});
