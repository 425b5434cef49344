/**
 * A restart with more unfinished messages in `state_dir` than the buffer holds (its capacity
 * was lowered): the resume loads them in slices as room frees, refuses new messages until the
 * last stored one is loaded, and delivers every one in order.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { configDocument } from "../../support/configs.js";
import { freePort } from "../../support/free-port.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "resume-secret-1234567890";
let spawned: Spawned | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  await receiver?.close();
  spawned = undefined;
  receiver = undefined;
});

const post = (url: string, sender: string, text: string) =>
  fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: sender, text }),
  });

const logLines = (run: Spawned) => run.lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe("resuming state_dir in slices", () => {
  it("never loads more than the buffer holds, refuses new messages until the backlog is loaded, and delivers all in order", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
    const port = await freePort();
    const config = (capacity: number) => {
      const webhook = {
        bind: "127.0.0.1:0",
        outbound_url: `http://127.0.0.1:${port}/replies`,
        buffer_capacity: capacity,
        delivery: { initial_delay_ms: 20, max_delay_ms: 50, max_attempts: 10_000 },
      };
      const document = configDocument(webhook, { state_dir: stateDir }) as {
        channels: Record<string, unknown>[];
        routes: Record<string, unknown>[];
      };
      // A second channel with nothing stored: it takes messages while the first one resumes.
      document.channels.push({
        type: "webhook",
        name: "other",
        token_env: "WEBHOOK_SECRET",
        webhook: { ...webhook, path: "/other", buffer_capacity: 100 },
      });
      document.routes.push({ channel: "other", brain: "echo" });
      return writeTempConfig(document as Parameters<typeof writeTempConfig>[0]);
    };
    spawned = spawnNode("dist/node.js", ["--config", await config(100)], { WEBHOOK_SECRET: SECRET });
    let url = await listeningUrl(spawned);
    const accepted: string[] = [];
    for (let index = 0; index < 30; index += 1) {
      const response = await post(url, `s${index % 3}`, `m${index}`);
      expect(response.status).toBe(200);
      accepted.push(((await response.json()) as { message_id: string }).message_id);
    }
    spawned.child.kill("SIGKILL");
    await spawned.exited;

    // The receiver is down: the first slice stays in the buffer, and the rest waits.
    spawned = spawnNode("dist/node.js", ["--config", await config(10)], { WEBHOOK_SECRET: SECRET });
    url = await listeningUrl(spawned);
    const first = logLines(spawned).find((line) => line.msg === "resumed unfinished messages from state_dir");
    expect(first).toMatchObject({ count: 10, more: true });
    const refused = await post(url, "new", "too early");
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { code: string }).code).toBe("buffer_full");
    const otherUrl = logLines(spawned).find(
      (line) => line.msg === "listening" && String(line.url).endsWith("/other"),
    )?.url;
    expect((await post(String(otherUrl), "elsewhere", "not held")).status).toBe(200);

    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port, onReply: (reply) => replies.push(reply) });
    const run = spawned;
    await waitFor(
      () => logLines(run).find((line) => line.msg === "resumed the rest of the unfinished messages from state_dir"),
      15_000,
      "the rest of the backlog loaded",
    ).then((line) => expect(line).toMatchObject({ count: 30 }));
    const answered = () => new Set(replies.map((reply) => (reply.body as { in_reply_to: string }).in_reply_to));
    await waitFor(() => (accepted.every((id) => answered().has(id)) ? true : undefined), 15_000, "every reply");
    // In acceptance order per conversation, the first delivery of each reply.
    for (const sender of ["s0", "s1", "s2"]) {
      const order = [
        ...new Set(
          replies
            .filter((reply) => (reply.body as { conversation_id: string }).conversation_id === sender)
            .map((reply) => (reply.body as { in_reply_to: string }).in_reply_to),
        ),
      ];
      expect(order).toEqual(accepted.filter((_, index) => `s${index % 3}` === sender));
    }
    expect((await post(url, "new", "in time")).status).toBe(200);
    spawned.child.kill("SIGTERM");
    expect(await spawned.exited).toBe(0);
  });
});
