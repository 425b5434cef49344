/**
 * Both ways of running the service from dist/ (`node dist/node.js` and `webhook-channel serve`)
 * write the SQLite timeline on its writer thread, as the `state` line says; with the timeline
 * off the line says so.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../../support/spawn-node.js";

let spawned: Spawned | undefined;

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

/** The `timeline` field of the `state` line of `node <script> ...args` on a fresh state_dir. */
async function stateLineTimeline(script: string, args: readonly string[], timeline: object): Promise<unknown> {
  const config = await writeTempConfig({
    state_dir: await mkdtemp(join(tmpdir(), "webhook-channel-writer-")),
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
  spawned = spawnNode(script, [...args, "--config", config], { WEBHOOK_SECRET: "writer-thread-secret-0123456789" });
  await listeningUrl(spawned);
  const state = spawned.lines
    .map((text) => JSON.parse(text) as { msg: string; timeline?: unknown })
    .find((entry) => entry.msg === "state");
  spawned.child.kill("SIGTERM");
  expect(await spawned.exited).toBe(0);
  return state?.timeline;
}

describe("the SQLite timeline's writer thread", () => {
  it.each([
    ["node dist/node.js", "dist/node.js", []],
    ["webhook-channel serve", "dist/cli.js", ["serve"]],
  ])("%s writes the timeline on its own thread", async (_name, script, args) => {
    expect(await stateLineTimeline(script, args, {})).toBe("writer thread");
  });

  it("is not started with the timeline off, and the state line says the timeline is off", async () => {
    expect(await stateLineTimeline("dist/cli.js", ["serve"], { retention_hours: 0 })).toBe("off");
  });
});
