/**
 * The pickup of replayed dead letters on a process that lost `state_dir` to another one: it
 * says so once and looks no more, rather than warn every second; the replays wait, stored, for
 * the process that holds the file.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newJob } from "../../../src/core/lifecycle/job.js";
import { startReplayPickup } from "../../../src/node/service/replay-pickup.js";
import { openSqliteBackend } from "../../../src/node/state/sqlite/sqlite-backend.js";
import type { StateBackend } from "../../../src/node/state/state-backend.js";
import { createLogSink } from "../../support/log-sink.js";
import { deadThenReplayed } from "../../support/sqlite-lanes.js";

const dirs: string[] = [];
const backends: StateBackend[] = [];

afterEach(async () => {
  for (const backend of backends.splice(0)) await backend.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("the replay pickup", () => {
  it("stops looking, saying why once, when another process took state_dir over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-channel-pickup-"));
    dirs.push(dir);
    const older = openSqliteBackend(dir, createLogSink().logger);
    backends.push(older);
    await deadThenReplayed(
      older,
      newJob({
        id: "z0",
        channel: "webhook",
        receivedAt: 1,
        message: { senderId: "z", conversationId: "z", text: "z" },
      }),
    );
    backends.push(openSqliteBackend(dir, createLogSink().logger));

    const { logger, lines } = createLogSink("info");
    const pickup = startReplayPickup({ lanes: older.lanes, queues: new Map(), logger });
    pickup.poke();
    pickup.poke();
    pickup.stop();
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ["error", "this process no longer holds the state: it takes no replayed dead letters"],
    ]);
  });
});
