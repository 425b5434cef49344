/**
 * The same service started twice by mistake, on one `state_dir`. On one address the second
 * start cannot listen, and must fail before it claims the file, so the running one keeps
 * accepting and writing. On another, the second takes the file, and the first, which may write
 * nothing more, says so and ends rather than answer 503 behind a healthy `/healthz`.
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

  it("on another address: the one that lost the file says so at once and ends with status 1, the new one serves", async () => {
    const config = await writeTempConfig({
      state_dir: await mkdtemp(join(tmpdir(), "webhook-channel-second-start-")),
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          webhook: { bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" },
        },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    const first = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    spawned.push(first);
    expect((await post(await listeningUrl(first))).status).toBe(200);

    const second = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    spawned.push(second);
    const url = await listeningUrl(second);
    // With no message to write, the first learns it from its own check, not from a refused write.
    expect(await first.exited).toBe(1);
    const lost = first.lines
      .map((line) => JSON.parse(line) as { level: string; msg: string })
      .find((line) => line.msg.startsWith("state lost"));
    expect(lost).toMatchObject({ level: "error" });
    expect(lost?.msg).toContain("another webhook-channel process opened the same state_dir");
    expect((await post(url)).status).toBe(200);
  });
});
