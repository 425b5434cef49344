import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { DeadLetter } from "../../src/core/dead-letters/dead-letter.js";
import { openStateDb } from "../../src/node/state/sqlite/sqlite-state.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";
import { buryIn, openSqliteLanes } from "../support/sqlite-lanes.js";

const letter: DeadLetter = {
  job: {
    message: {
      id: "msg-1",
      channel: "webhook",
      receivedAt: Date.UTC(2026, 0, 2),
      message: { senderId: "alice", text: "hello", conversationId: "conv-1" },
    },
    delivered: 0,
    attempts: 3,
  },
  error: { code: "brain_failed", message: "the brain answered 500", retryable: true, status: 500 },
  attempts: 3,
  diedAt: Date.UTC(2026, 0, 2, 0, 1),
};

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return runCliCaptured(args, {});
}

describe("dead-letters show and delete on state_dir", () => {
  it("shows one dead letter as the admin API's item, then deletes it", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
    const db = openStateDb(stateDir);
    await buryIn(openSqliteLanes(db), letter);
    db.close();
    const config = await writeTempConfig({
      state_dir: stateDir,
      channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    const shown = await cli(["dead-letters", "show", "--id", "msg-1", "--json", "--config", config]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({
      id: "msg-1",
      stage: "brain",
      failed_at: "2026-01-02T00:01:00.000Z",
      error: { code: "brain_failed", message: "the brain answered 500", status: 500 },
      replies: [],
    });
    expect((await cli(["dead-letters", "show", "--config", config])).code).toBe(2);
    for (const action of ["show", "delete", "replay"]) {
      expect(await cli(["dead-letters", action, "--id", "", "--config", config])).toMatchObject({
        code: 2,
        err: expect.stringContaining("--id needs a dead letter's id, not an empty value"),
      });
    }
    expect(await cli(["dead-letters", "delete", "--id", "msg-1", "--config", config])).toMatchObject({
      code: 0,
      out: "deleted msg-1\n",
    });
    expect(await cli(["dead-letters", "show", "--id", "msg-1", "--config", config])).toMatchObject({
      code: 1,
      err: "no dead letter with id msg-1\n",
    });
    // Nothing left to replay: said as such, not as letters a service would pick up.
    expect(await cli(["dead-letters", "replay", "--all", "--config", config])).toMatchObject({
      code: 1,
      err: "nothing re-queued\n",
    });
  });
});
