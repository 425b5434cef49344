/**
 * `dead-letters replay --config` records each replay in the message's timeline, as a replay
 * through the admin API does, so `messages show` tells that an operator replayed it.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DeadLetter } from "../../src/core/dead-letters/dead-letter.js";
import { openStateDb } from "../../src/node/state/sqlite/sqlite-state.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";
import { buryIn, openSqliteLanes } from "../support/sqlite-lanes.js";

const DIED_AT = Date.UTC(2026, 0, 2, 3, 4, 5);

function letter(id: string): DeadLetter {
  return {
    job: {
      message: {
        id,
        channel: "webhook",
        receivedAt: DIED_AT - 60_000,
        message: { senderId: "alice", text: "hello", conversationId: "conv-1" },
      },
      delivered: 0,
      attempts: 3,
    },
    error: { code: "brain_failed", message: "the brain answered 401", retryable: false, status: 401 },
    attempts: 3,
    diedAt: DIED_AT,
  };
}

/** A state_dir holding `ids` as dead letters, and a configuration on it (plus `extra`). */
async function stateWith(ids: readonly string[], extra: Record<string, unknown> = {}) {
  const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
  const db = openStateDb(stateDir);
  const lanes = openSqliteLanes(db);
  for (const id of ids) await buryIn(lanes, letter(id));
  db.close();
  const config = await writeTempConfig({
    state_dir: stateDir,
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
    routes: [{ channel: "webhook", brain: "echo" }],
    ...extra,
  });
  return { stateDir, config };
}

describe("dead-letters replay --config with state_dir", () => {
  it("records `replayed` in the timeline of each message it moved, and only those", async () => {
    const { config } = await stateWith(["msg-1", "msg-2"]);
    const before = Date.now();
    const replay = await runCliCaptured([
      "dead-letters",
      "replay",
      "--id",
      "msg-1",
      "--id",
      "gone",
      "--config",
      config,
    ]);
    expect(replay.code).toBe(1);
    expect(replay.out).toBe("replayed msg-1\n");
    expect(replay.err).toContain("no dead letter with id gone");

    const shown = await runCliCaptured(["messages", "show", "msg-1", "--json", "--config", config]);
    expect(shown.code).toBe(0);
    const timeline = JSON.parse(shown.out) as { status: string; events: { type: string; at: string }[] };
    expect(timeline.status).toBe("replayed");
    expect(timeline.events.map((event) => event.type)).toEqual(["replayed"]);
    expect(Date.parse(timeline.events[0]?.at ?? "")).toBeGreaterThanOrEqual(before - 1_000);
    // The letter left in place, and an id that was never a letter, have no timeline from it.
    expect((await runCliCaptured(["messages", "show", "msg-2", "--config", config])).code).toBe(1);
    expect((await runCliCaptured(["messages", "show", "gone", "--config", config])).code).toBe(1);

    const all = await runCliCaptured(["dead-letters", "replay", "--all", "--config", config]);
    expect(all.code).toBe(0);
    const second = await runCliCaptured(["messages", "show", "msg-2", "--json", "--config", config]);
    expect((JSON.parse(second.out) as { status: string }).status).toBe("replayed");
  });

  it("replays, and says so on stderr, when the timeline file cannot be opened", async () => {
    const { stateDir, config } = await stateWith(["msg-1"]);
    // A folder where the file should be: SQLite cannot open it.
    await mkdir(join(stateDir, "timeline.sqlite"));
    const replay = await runCliCaptured(["dead-letters", "replay", "--id", "msg-1", "--config", config]);
    expect(replay.code).toBe(0);
    expect(replay.out).toBe("replayed msg-1\n");
    expect(replay.err).toContain("cannot open the message timeline, so this replay is not recorded in it");
    const listed = await runCliCaptured(["dead-letters", "list", "--config", config]);
    expect(listed.err).toBe("0 dead letter(s)\n");
  });

  it("replays without a timeline file when the configuration turns the timeline off", async () => {
    const { stateDir, config } = await stateWith(["msg-1"], { timeline: { retention_hours: 0 } });
    const replay = await runCliCaptured(["dead-letters", "replay", "--id", "msg-1", "--config", config]);
    expect(replay.code).toBe(0);
    expect(replay.out).toBe("replayed msg-1\n");
    expect(existsSync(join(stateDir, "timeline.sqlite"))).toBe(false);
  });
});
