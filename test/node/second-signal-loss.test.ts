/**
 * A second SIGTERM exits at once, without waiting for the stop: in memory, the accepted messages
 * not yet finished are lost, and the process names them at `error` (as a stop whose time ran out
 * does) rather than leaving only "exiting without waiting".
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../../src/node/receiver/sample-receiver.js";
import { configDocument } from "../support/configs.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { waitFor } from "../support/wait-for.js";

const SECRET = "second-signal-secret-abcdef";
let spawned: Spawned | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
  await receiver?.close();
  receiver = undefined;
});

describe("a second SIGTERM in memory", () => {
  it("exits 1 at once and names the accepted messages it loses", async () => {
    let posts = 0;
    // The receiver never answers: both messages stay unfinished.
    receiver = await startReceiver({
      port: 0,
      status: () => {
        posts += 1;
        return "hang";
      },
    });
    const config = await writeTempConfig(
      configDocument({ bind: "127.0.0.1:0", outbound_url: receiver.url }, { shutdown_timeout_ms: 60_000 }),
    );
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    const url = await listeningUrl(spawned);
    const ids: string[] = [];
    for (const sender of ["ann", "bob"]) {
      const response = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: sender, text: "hello" }),
      });
      ids.push(((await response.json()) as { message_id: string }).message_id);
    }
    await waitFor(() => (posts >= 2 ? true : undefined), 10_000, "both POSTs under way");
    const child = spawned.child;
    child.kill("SIGTERM");
    const lines = spawned.lines;
    await waitFor(() => (lines.some((line) => line.includes("shutting down")) ? true : undefined), 5_000, "the stop");
    child.kill("SIGTERM");
    expect(await spawned.exited).toBe(1);
    const lost = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => String(line.msg).includes("received again"));
    expect(lost).toMatchObject({ level: "error", count: 2 });
    expect([...((lost?.message_ids as string[] | undefined) ?? [])].sort()).toEqual([...ids].sort());
  });
});
