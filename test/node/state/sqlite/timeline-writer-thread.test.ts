/**
 * The SQLite timeline's writer thread: both ways of running the service from dist/
 * (`node dist/node.js` and `webhook-channel serve`) write the timeline on it, as the `state` line
 * says; with the timeline turned off there is no `timeline.sqlite` beside the state, and so no
 * writer thread (which opens that file first).
 */
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STATE_FILE } from "../../../../src/node/state/sqlite/sqlite-state.js";
import { TIMELINE_FILE } from "../../../../src/node/state/sqlite/timeline-db.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../../support/spawn-node.js";

const SECRET = "timeline-writer-secret-0123456789abcdef";
let spawned: Spawned | undefined;

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

/**
 * Starts `node <script> ...args` on a fresh `state_dir` with `timeline`, answers one message and
 * stops it gracefully; the folder, and the `timeline` field of its `state` line.
 */
async function runWithTimeline(
  timeline: object,
  script = "dist/node.js",
  args: readonly string[] = [],
): Promise<{ stateDir: string; where: unknown }> {
  const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-timeline-writer-"));
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
  spawned = spawnNode(script, [...args, "--config", config], { WEBHOOK_SECRET: SECRET });
  const response = await fetch(await listeningUrl(spawned), {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text: "hello" }),
  });
  expect(response.status).toBe(200);
  const state = spawned.lines
    .map((text) => JSON.parse(text) as { msg: string; timeline?: unknown })
    .find((entry) => entry.msg === "state");
  spawned.child.kill("SIGTERM");
  expect(await spawned.exited).toBe(0);
  return { stateDir, where: state?.timeline };
}

describe("the SQLite timeline's writer thread", () => {
  it.each([
    ["node dist/node.js", "dist/node.js", []],
    ["webhook-channel serve", "dist/cli.js", ["serve"]],
  ])("%s writes the timeline on it, into timeline.sqlite beside the state", async (_name, script, args) => {
    const { stateDir, where } = await runWithTimeline({}, script, args);
    expect(where).toBe("writer thread");
    expect(existsSync(join(stateDir, TIMELINE_FILE))).toBe(true);
  });

  it.each([
    ["retention_hours", { retention_hours: 0 }],
    ["max_messages", { max_messages: 0 }],
  ])("timeline.%s 0: no timeline.sqlite and no writer thread, the state as usual", async (_key, timeline) => {
    const { stateDir, where } = await runWithTimeline(timeline);
    expect(where).toBe("off");
    expect(existsSync(join(stateDir, STATE_FILE))).toBe(true);
    expect(existsSync(join(stateDir, TIMELINE_FILE))).toBe(false);
  });
});
