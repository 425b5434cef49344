import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run-cli.js";
import { type ReceivedReply, type Receiver, startReceiver } from "../../src/node/receiver/sample-receiver.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { waitFor } from "../support/wait-for.js";

const OLD = "old-secret-0123456789";
const NEW = "new-secret-9876543210";
let spawned: Spawned | undefined;
const receivers: Receiver[] = [];

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

function configFor(outboundUrl: string, webhook: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", outbound_url: outboundUrl, ...webhook },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    shutdown_timeout_ms: 2_000,
  };
}

async function receiver(): Promise<{ url: string; replies: ReceivedReply[] }> {
  const replies: ReceivedReply[] = [];
  const started = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
  receivers.push(started);
  return { url: started.url, replies };
}

function post(url: string, secret: string, text = "hello"): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text }),
  });
}

type LogLine = { level: string; msg: string } & Record<string, unknown>;

function logLines(process: Spawned): LogLine[] {
  return process.lines.map((line) => JSON.parse(line) as LogLine);
}

/** Sends SIGHUP and waits for the reload's verdict: its success line or its last refusal line. */
async function hangUp(process: Spawned): Promise<LogLine[]> {
  const before = process.lines.length;
  process.child.kill("SIGHUP");
  const verdict = (line: LogLine) =>
    line.msg.startsWith("configuration reloaded") ||
    (line.msg.startsWith("reload refused: ") && line.msg.includes("the service carries on"));
  await waitFor(
    () => (logLines(process).slice(before).some(verdict) ? true : undefined),
    10_000,
    "the reload's verdict",
  );
  return logLines(process).slice(before);
}

describe("SIGHUP on node dist/node.js", () => {
  it("sends the replies of messages after the reload to the new outbound_url", async () => {
    const first = await receiver();
    const second = await receiver();
    const config = await writeTempConfig(configFor(first.url));
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: OLD });
    const url = await listeningUrl(spawned);
    expect((await post(url, OLD, "before")).status).toBe(200);
    await waitFor(() => first.replies[0], 10_000, "the first reply");

    await writeFile(config, JSON.stringify(configFor(second.url)));
    const lines = await hangUp(spawned);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "info",
        msg: "configuration reloaded",
        changed: ["channels[0].webhook.outbound_url"],
      }),
    );
    expect((await post(url, OLD, "after")).status).toBe(200);
    const reply = await waitFor(() => second.replies[0], 10_000, "the reply at the new receiver");
    expect(reply.body).toMatchObject({ text: "after" });
    expect(first.replies).toHaveLength(1);

    spawned.child.kill("SIGTERM");
    expect(await spawned.exited).toBe(0);
  });

  it("refuses a reload that changes the bind, naming the key, and keeps serving as before", async () => {
    const target = await receiver();
    const config = await writeTempConfig(configFor(target.url));
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: OLD });
    const url = await listeningUrl(spawned);

    await writeFile(config, JSON.stringify(configFor(target.url, { bind: "127.0.0.1:1" })));
    const lines = await hangUp(spawned);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: expect.stringContaining("reload refused: these keys change only with a restart"),
        keys: ["channels[0].webhook.bind"],
      }),
    );
    expect((await post(url, OLD)).status).toBe(200);
    await waitFor(() => target.replies[0], 10_000, "the reply");
  });

  it("refuses an invalid configuration with the errors config check prints, and keeps serving", async () => {
    const target = await receiver();
    const config = await writeTempConfig(configFor(target.url));
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: OLD });
    const url = await listeningUrl(spawned);

    await writeFile(config, JSON.stringify(configFor("ftp://nowhere")));
    let checked = "";
    await runCli(["config", "check", config], {
      env: {},
      out: () => undefined,
      err: (text) => {
        checked += text;
      },
    });
    const problem = checked.split("\n").find((line) => line.startsWith("  error   "));
    expect(problem).toContain("channels[0].webhook.outbound_url");

    const lines = await hangUp(spawned);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: `reload refused: invalid configuration: ${problem?.slice("  error   ".length)}`,
      }),
    );
    expect((await post(url, OLD)).status).toBe(200);
    await waitFor(() => target.replies[0], 10_000, "the reply");
  });

  it("refuses a configuration nested thousands of levels deep, naming the path, and keeps serving", async () => {
    const target = await receiver();
    const config = await writeTempConfig(configFor(target.url));
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: OLD });
    const url = await listeningUrl(spawned);

    const depth = 5_000;
    const valid = JSON.stringify(configFor(target.url));
    await writeFile(config, `${valid.slice(0, -1)},"x":${"[".repeat(depth)}${"]".repeat(depth)}}`);
    const lines = await hangUp(spawned);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: expect.stringMatching(
          /^reload refused: invalid configuration: x(\[0\])+: is nested deeper than \d+ levels/,
        ),
      }),
    );
    expect((await post(url, OLD)).status).toBe(200);
    await waitFor(() => target.replies[0], 10_000, "the reply");
  });

  it("reads a rotated secret file again: both secrets during the rotation, then only the new one", async () => {
    const target = await receiver();
    const config = await writeTempConfig(configFor(target.url));
    const folder = await mkdtemp(join(tmpdir(), "webhook-channel-secret-"));
    const secretFile = join(folder, "webhook-secret");
    await writeFile(secretFile, `${OLD}\n`);
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET_FILE: secretFile });
    const url = await listeningUrl(spawned);
    expect((await post(url, NEW)).status).toBe(401);

    await writeFile(secretFile, `${NEW} ${OLD}\n`);
    expect(await hangUp(spawned)).toContainEqual(
      expect.objectContaining({ msg: "configuration reloaded", secrets_changed: ["WEBHOOK_SECRET"] }),
    );
    expect((await post(url, OLD)).status).toBe(200);
    expect((await post(url, NEW)).status).toBe(200);

    await writeFile(secretFile, `${NEW}\n`);
    await hangUp(spawned);
    expect((await post(url, OLD)).status).toBe(401);
    expect((await post(url, NEW)).status).toBe(200);

    await writeFile(secretFile, "\n");
    expect(await hangUp(spawned)).toContainEqual(
      expect.objectContaining({
        msg: expect.stringContaining(`reload refused: the file ${secretFile} named by WEBHOOK_SECRET_FILE is empty`),
      }),
    );
    expect((await post(url, NEW)).status).toBe(200);
    const log = spawned.lines.join("\n");
    expect(log).not.toContain(OLD);
    expect(log).not.toContain(NEW);
  });

  it("reads a rotated admin secret file again, and keeps the old one when the new one is unusable", async () => {
    const ADMIN_OLD = "old-admin-secret-0123456789";
    const ADMIN_NEW = "new-admin-secret-9876543210";
    const target = await receiver();
    const config = await writeTempConfig({
      ...configFor(target.url),
      admin: { token_env: "WEBHOOK_ADMIN_SECRET" },
    });
    const folder = await mkdtemp(join(tmpdir(), "webhook-channel-admin-secret-"));
    const adminFile = join(folder, "admin-secret");
    await writeFile(adminFile, `${ADMIN_OLD}\n`);
    spawned = spawnNode("dist/node.js", ["--config", config], {
      WEBHOOK_SECRET: OLD,
      WEBHOOK_ADMIN_SECRET_FILE: adminFile,
    });
    const origin = new URL(await listeningUrl(spawned)).origin;
    const admin = async (secret: string) =>
      (await fetch(`${origin}/admin/dead-letters`, { headers: { authorization: `Bearer ${secret}` } })).status;
    expect(await admin(ADMIN_OLD)).toBe(200);

    await writeFile(adminFile, `${ADMIN_NEW}\n`);
    expect(await hangUp(spawned)).toContainEqual(
      expect.objectContaining({ msg: "configuration reloaded", secrets_changed: ["WEBHOOK_ADMIN_SECRET"] }),
    );
    expect(await admin(ADMIN_OLD)).toBe(401);
    expect(await admin(ADMIN_NEW)).toBe(200);

    await writeFile(adminFile, `${OLD}\n`);
    expect(await hangUp(spawned)).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: expect.stringContaining(
          "WEBHOOK_ADMIN_SECRET (admin.token_env) holds the same secret as WEBHOOK_SECRET, a channel's inbound secret",
        ),
      }),
    );
    expect(await admin(OLD)).toBe(401);
    expect(await admin(ADMIN_NEW)).toBe(200);

    await writeFile(adminFile, "\n");
    expect(await hangUp(spawned)).toContainEqual(
      expect.objectContaining({
        msg: expect.stringContaining(
          `reload refused: the file ${adminFile} named by WEBHOOK_ADMIN_SECRET_FILE is empty (admin.token_env)`,
        ),
      }),
    );
    expect(await admin(ADMIN_NEW)).toBe(200);
    const log = spawned.lines.join("\n");
    for (const secret of [OLD, ADMIN_OLD, ADMIN_NEW]) expect(log).not.toContain(secret);
  });
});
