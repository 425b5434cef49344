import { afterEach, describe, expect, it } from "vitest";
import { VERSION } from "../../src/core/version.js";
import { type ReceivedReply, type Receiver, startReceiver } from "../../src/node/receiver/sample-receiver.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { waitFor } from "../support/wait-for.js";

const SECRET = "process-secret-abcdef";
let receiver: Receiver | undefined;
let spawned: Spawned | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  await receiver?.close();
  spawned = undefined;
  receiver = undefined;
});

function configFor(outboundUrl: string, bind = "127.0.0.1:0"): unknown {
  return {
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { bind, outbound_url: outboundUrl } }],
    routes: [{ channel: "webhook", brain: "echo" }],
    shutdown_timeout_ms: 5_000,
  };
}

describe("node dist/node.js", () => {
  it("answers a real request and posts the echo reply to a real receiver, then exits 0 on SIGTERM", async () => {
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    const config = await writeTempConfig(configFor(receiver.url));
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    const url = await listeningUrl(spawned);

    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ sender_id: "carol", text: "ping" }),
    });
    expect(response.status).toBe(200);
    const { message_id } = (await response.json()) as { message_id: string };
    const reply = await waitFor(() => replies[0], 10_000, "the reply POST");
    expect(reply.body).toMatchObject({
      in_reply_to: message_id,
      recipient_id: "carol",
      conversation_id: "carol",
      text: "ping",
    });

    const health = await fetch(new URL("/healthz", url));
    expect(await health.json()).toEqual({ status: "ok" });

    spawned.child.kill("SIGTERM");
    expect(await spawned.exited).toBe(0);
    expect(spawned.lines.join("\n")).not.toContain(SECRET);
  });

  it("refuses to start without the secret, naming the variable", async () => {
    const config = await writeTempConfig(configFor("http://127.0.0.1:9/replies"));
    spawned = spawnNode("dist/node.js", ["--config", config], {});
    expect(await spawned.exited).toBe(1);
    expect(spawned.lines.join("\n")).toContain("WEBHOOK_SECRET");
  });

  it("refuses to start with an empty secret", async () => {
    const config = await writeTempConfig(configFor("http://127.0.0.1:9/replies"));
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: "" });
    expect(await spawned.exited).toBe(1);
    expect(spawned.lines.join("\n")).toMatch(/WEBHOOK_SECRET is empty/);
  });

  it("refuses to start on an invalid configuration, naming the path", async () => {
    const config = await writeTempConfig({ ...(configFor("ftp://x") as object) });
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    expect(await spawned.exited).toBe(1);
    expect(spawned.lines.join("\n")).toContain("channels[0].webhook.outbound_url");
  });

  it("exits 2 on an unknown option", async () => {
    spawned = spawnNode("dist/node.js", ["--bogus"], { WEBHOOK_SECRET: SECRET });
    expect(await spawned.exited).toBe(2);
  });

  it.each(["--help", "-h"])("%s prints the usage and exits 0 without starting", async (flag) => {
    spawned = spawnNode("dist/node.js", [flag, "--config", "/nonexistent.json"], {});
    expect(await spawned.exited).toBe(0);
    expect(spawned.lines.join("\n")).toContain("usage: node dist/node.js [--config <file>]");
  });

  it.each(["--version", "-v"])("%s prints the package version and exits 0", async (flag) => {
    spawned = spawnNode("dist/node.js", [flag], {});
    expect(await spawned.exited).toBe(0);
    expect(spawned.lines).toEqual([VERSION]);
  });

  it("logs the non-loopback warning at startup", async () => {
    const config = await writeTempConfig(configFor("http://127.0.0.1:9/replies", "0.0.0.0:0"));
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    await listeningUrl(spawned);
    const warning = spawned.lines
      .map((line) => JSON.parse(line) as { level: string; msg: string })
      .find((line) => line.level === "warn");
    expect(warning?.msg).toContain("cleartext");
  });
});
