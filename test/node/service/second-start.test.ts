/**
 * The same service started twice by mistake, on one `state_dir` and one address: the second
 * start cannot listen, and must fail before it claims the file, so the running one keeps
 * accepting and writing.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../support/free-port.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";

const SECRET = "second-start-secret-0123456789abcdef";
const spawned: Spawned[] = [];

afterEach(() => {
  for (const process of spawned.splice(0)) process.child.kill("SIGKILL");
});

function post(url: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text: "hello" }),
  });
}

describe("a second start on the same state_dir and address", () => {
  it("fails to listen before it opens the state: the running service keeps its file", async () => {
    const port = await freePort();
    const config = await writeTempConfig({
      state_dir: await mkdtemp(join(tmpdir(), "webhook-channel-second-start-")),
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          webhook: { bind: `127.0.0.1:${port}`, outbound_url: "http://127.0.0.1:9/replies" },
        },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
      shutdown_timeout_ms: 0,
    });
    const first = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    spawned.push(first);
    const url = await listeningUrl(first);
    expect((await post(url)).status).toBe(200);

    const second = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    spawned.push(second);
    expect(await second.exited).toBe(1);
    expect(second.lines.join("\n")).toContain("the address is already in use");
    expect(second.lines.some((line) => line.includes('"msg":"state"'))).toBe(false);

    // Still the file's owner: a message is stored (200, not 503 state_unavailable) and it is ready.
    expect((await post(url)).status).toBe(200);
    const ready = await fetch(new URL("/readyz", url));
    expect(ready.status).toBe(200);
    expect(first.lines.join("\n")).not.toContain("another webhook-channel process opened the same state_dir");
  });
});
