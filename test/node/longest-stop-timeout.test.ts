/**
 * `shutdown_timeout_ms` may be as long as a timer takes; the stop's hold on the process lasts a
 * little longer than it, and must not become a timer that overflows (Node would fire it at once,
 * with a TimeoutOverflowWarning, and the process could end in the middle of its stop).
 */
import { afterEach, describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "../../src/core/timer-limit.js";
import { configDocument } from "../support/configs.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";

let spawned: Spawned | undefined;
afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

describe("a stop under the longest shutdown_timeout_ms", () => {
  it("holds the process with a timer that fits, and ends cleanly", async () => {
    const config = await writeTempConfig(
      configDocument({ bind: "127.0.0.1:0" }, { shutdown_timeout_ms: MAX_TIMER_MS }),
    );
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: "stop-secret-abcdef" });
    await listeningUrl(spawned);
    spawned.child.kill("SIGTERM");
    expect(await spawned.exited).toBe(0);
    expect(spawned.stderr.join("")).not.toContain("TimeoutOverflowWarning");
    expect(spawned.lines.join("\n")).toContain("shutdown complete");
  });
});
