/**
 * With `state_dir` and the timeline turned off, `node dist/node.js` opens no timeline: no
 * `timeline.sqlite` beside the state, and so no writer thread (which opens that file first).
 */
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STATE_FILE } from "../../../../src/node/state/sqlite/sqlite-state.js";
import { TIMELINE_FILE } from "../../../../src/node/state/sqlite/timeline-db.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../../support/spawn-node.js";

const SECRET = "timeline-off-secret-0123456789abcdef";
let spawned: Spawned | undefined;

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

/** Starts the service on a fresh `state_dir` with `timeline`, answers one message, stops it; the folder. */
async function runWithTimeline(timeline: Record<string, unknown>): Promise<string> {
  const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-timeline-off-"));
  const config = await writeTempConfig({
    state_dir: stateDir,
    timeline,
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    shutdown_timeout_ms: 0,
  });
  spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
  const response = await fetch(await listeningUrl(spawned), {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text: "hello" }),
  });
  expect(response.status).toBe(200);
  spawned.child.kill("SIGTERM");
  expect(await spawned.exited).toBe(0);
  return stateDir;
}

describe("state_dir with the timeline off", () => {
  it.each([
    ["retention_hours", { retention_hours: 0 }],
    ["max_messages", { max_messages: 0 }],
  ])("timeline.%s 0: no timeline.sqlite and no writer thread, the state as usual", async (_key, timeline) => {
    const stateDir = await runWithTimeline(timeline);
    expect(existsSync(join(stateDir, STATE_FILE))).toBe(true);
    expect(existsSync(join(stateDir, TIMELINE_FILE))).toBe(false);
  });

  it("with the timeline on (the default), timeline.sqlite is beside the state", async () => {
    const stateDir = await runWithTimeline({});
    expect(existsSync(join(stateDir, TIMELINE_FILE))).toBe(true);
  });
});
