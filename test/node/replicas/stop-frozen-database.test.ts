/**
 * SIGTERM while the database has stopped answering (frozen, or cut off by a partition): the stop
 * cannot give the replica's conversations up, and says so, but it ends within
 * `shutdown_timeout_ms` and the margin the deployment docs leave (a systemd unit's or a pod's
 * grace), exit 0, rather than wait for a goodbye the database never answers.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { gateInFront, type TcpGate } from "../../support/tcp-gate.js";
import { waitFor } from "../../support/wait-for.js";

/** The margin over `shutdown_timeout_ms` the deployment docs leave before a stop is killed. */
const STOP_MARGIN_MS = 15_000;

let spawned: Spawned | undefined;
let gate: TcpGate | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  gate?.release();
  await gate?.close();
  spawned = undefined;
  gate = undefined;
});

describe("a stop while the database does not answer", () => {
  it("ends within shutdown_timeout_ms and the documented margin, with exit code 0", async () => {
    const gated = await gateInFront(await createTestDatabase(inject("postgresUrl")));
    gate = gated.gate;
    const config = await writeTempConfig({
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          webhook: { bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" },
        },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
      shutdown_timeout_ms: 1_000,
      postgres_url_env: "DATABASE_URL",
    });
    const running = spawnNode("dist/node.js", ["--config", config], {
      WEBHOOK_SECRET: "stop-frozen-database-0123456789",
      DATABASE_URL: gated.url,
    });
    spawned = running;
    await listeningUrl(running);
    gated.gate.hold();
    running.child.kill("SIGTERM");
    let code: number | null | undefined;
    void running.exited.then((exited) => {
      code = exited;
    });
    await waitFor(() => (code === undefined ? undefined : true), 1_000 + STOP_MARGIN_MS, "the stop to end");
    expect(code).toBe(0);
    expect(running.lines.some((line) => line.includes("shutdown complete"))).toBe(true);
  }, 60_000);
});
