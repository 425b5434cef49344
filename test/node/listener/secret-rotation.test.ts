import { afterEach, describe, expect, it } from "vitest";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";

const NEW = "rotation-new-4f9c2a";
const OLD = "rotation-old-7d1e0b";
let spawned: Spawned | undefined;

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

function config(): Promise<string> {
  return writeTempConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
  });
}

async function status(url: string, secret: string): Promise<number> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text: "hello" }),
  });
  await response.body?.cancel();
  return response.status;
}

describe("rotating the inbound secret (node dist/node.js)", () => {
  it("accepts both secrets of a rotation, the new and the old, and nothing else", async () => {
    spawned = spawnNode("dist/node.js", ["--config", await config()], { WEBHOOK_SECRET: `${NEW} ${OLD}` });
    const url = await listeningUrl(spawned);
    expect(await status(url, NEW)).toBe(200);
    expect(await status(url, OLD)).toBe(200);
    expect(await status(url, "rotation-third-000000")).toBe(401);
    expect(await status(url, `${NEW} ${OLD}`)).toBe(401);
    expect(spawned.lines.join("\n")).not.toContain(NEW);
    expect(spawned.lines.join("\n")).not.toContain(OLD);
  });

  it.each([
    ["three secrets", `${NEW} ${OLD} rotation-third-000000`, "3 space-separated parts"],
    ["a double space", `${NEW}  ${OLD}`, "empty part"],
    ["a trailing space", `${NEW} `, "empty part"],
    ["a leading space", ` ${NEW}`, "empty part"],
  ])("refuses to start with %s, naming the variable and never the value", async (_what, value, reason) => {
    spawned = spawnNode("dist/node.js", ["--config", await config()], { WEBHOOK_SECRET: value });
    expect(await spawned.exited).toBe(1);
    const output = spawned.lines.join("\n");
    expect(output).toContain("WEBHOOK_SECRET");
    expect(output).toContain(reason);
    expect(output).not.toContain(NEW);
    expect(output).not.toContain(OLD);
  });
});
