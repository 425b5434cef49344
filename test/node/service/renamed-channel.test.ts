/**
 * A channel renamed between two runs over one `state_dir`: the messages it left unfinished belong
 * to a channel the new configuration does not have. They stay stored, said once per channel (a
 * large backlog must not flood the log at every start), and go out once the name is back.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { freePort } from "../../support/free-port.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "renamed-channel-secret-1234567890";
const STRANDED =
  "stored messages belong to a channel that is no longer configured; they stay in state_dir, and are delivered once a channel of that name is configured again";
let spawned: Spawned | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  await receiver?.close();
  spawned = undefined;
  receiver = undefined;
});

const logLines = (run: Spawned) => run.lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe("a channel renamed with messages unfinished", () => {
  it("keeps them, says so once per channel, and delivers them when the name is back", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
    const port = await freePort();
    const config = (...names: string[]) =>
      writeTempConfig({
        channels: names.map((name, index) => ({
          type: "webhook",
          name,
          token_env: "WEBHOOK_SECRET",
          webhook: {
            bind: "127.0.0.1:0",
            path: index === 0 ? "/webhook" : `/${name}`,
            outbound_url: `http://127.0.0.1:${port}/replies`,
            delivery: { initial_delay_ms: 20, max_delay_ms: 50, max_attempts: 10_000 },
          },
        })),
        routes: names.map((name) => ({ channel: name, brain: "echo" })),
        state_dir: stateDir,
      });
    // The receiver is down: 12 messages stay unfinished.
    spawned = spawnNode("dist/node.js", ["--config", await config("beta")], { WEBHOOK_SECRET: SECRET });
    let url = await listeningUrl(spawned);
    const accepted: string[] = [];
    for (let index = 0; index < 12; index += 1) {
      const response = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: "alice", text: `m${index}` }),
      });
      expect(response.status).toBe(200);
      accepted.push(((await response.json()) as { message_id: string }).message_id);
    }
    spawned.child.kill("SIGKILL");
    await spawned.exited;

    // Two channels now: each reads the stored messages, and the count is still one per message.
    spawned = spawnNode("dist/node.js", ["--config", await config("gamma", "delta")], { WEBHOOK_SECRET: SECRET });
    await listeningUrl(spawned);
    const said = logLines(spawned).filter((line) => line.msg === STRANDED);
    expect(said).toEqual([
      expect.objectContaining({ level: "error", channel: "beta", count: 12, message_ids: accepted.slice(0, 10) }),
    ]);
    spawned.child.kill("SIGKILL");
    await spawned.exited;

    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port, onReply: (reply) => replies.push(reply) });
    spawned = spawnNode("dist/node.js", ["--config", await config("beta")], { WEBHOOK_SECRET: SECRET });
    url = await listeningUrl(spawned);
    await waitFor(() => (replies.length >= 12 ? true : undefined), 10_000, "the twelve replies");
    expect(replies.map((reply) => (reply.body as { in_reply_to: string }).in_reply_to)).toEqual(accepted);
    expect(logLines(spawned).filter((line) => line.msg === STRANDED)).toEqual([]);
  });
});
