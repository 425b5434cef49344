import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { createJsonLogger } from "../../../src/core/log/logger.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { replayHintFor } from "../../../src/node/queue/replay-hint.js";
import { type ReceivedReply, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { startProgressLog } from "../../../src/node/service/progress-log.js";
import { startService } from "../../../src/node/service/start-service.js";
import { createLogSink } from "../../support/log-sink.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { listeningUrl, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;

function queuedMessage(conversationId: string, receivedAt: number): QueuedMessage {
  return { id: crypto.randomUUID(), channel: "webhook", receivedAt, message: { senderId: "u", conversationId } };
}

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("the progress log", () => {
  it("writes one progress line per interval with the interval's counts, and nothing when idle", () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createJsonLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>), "info");
    let now = 1_000_000;
    const queue = createJobQueue({ capacity: 10, run: () => new Promise(() => undefined), logger });
    const progress = startProgressLog({ logger, queues: () => [queue], now: () => now, intervalMs: 3_600_000 });
    try {
      progress.flush();
      expect(lines).toEqual([]);

      expect(queue.enqueue(queuedMessage("a", now - 250))).toBeUndefined();
      progress.record("accepted");
      progress.record("retry");
      progress.record("done");
      progress.record("dead");
      progress.flush();
      expect(lines).toEqual([
        expect.objectContaining({
          level: "info",
          msg: "progress",
          accepted: 1,
          delivered: 1,
          retrying: 1,
          dead_lettered: 1,
          queue_depth: 1,
          oldest_pending_ms: 250,
        }),
      ]);

      // Nothing happened, but a message still waits: the line says so, with its age.
      now += 1_000;
      progress.flush();
      expect(lines[1]).toMatchObject({ accepted: 0, delivered: 0, queue_depth: 1, oldest_pending_ms: 1_250 });
    } finally {
      progress.stop();
    }
  });

  it("reports traffic of a running service at info level, then goes quiet", async () => {
    const replies: ReceivedReply[] = [];
    const receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    const result = validateConfig({
      log_level: "info",
      channels: [{ type: "webhook", token_env: "S", webhook: { bind: "127.0.0.1:0", outbound_url: receiver.url } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const { logger, lines } = createLogSink("info");
    const service = await startService({
      config: result.config,
      secrets: new Map([["webhook", "progress-secret-0123456789"]]),
      logger,
      progressIntervalMs: 50,
    });
    try {
      const url = `http://127.0.0.1:${service.listeners[0]?.port}/webhook`;
      expect(lines.find((line) => line.msg === "listening")).toMatchObject({
        level: "info",
        channel: "webhook",
        bind: "127.0.0.1:0",
        path: "/webhook",
      });
      for (const text of ["one", "two"]) {
        const response = await fetch(url, {
          method: "POST",
          headers: { authorization: "Bearer progress-secret-0123456789", "content-type": "application/json" },
          body: JSON.stringify({ sender_id: "a", text }),
        });
        expect(response.status).toBe(200);
      }
      await waitFor(() => (replies.length === 2 ? true : undefined), 5_000, "two replies");
      const progress = () => lines.filter((line) => line.msg === "progress");
      await waitFor(
        () => {
          const totals = { accepted: 0, delivered: 0 };
          for (const line of progress()) {
            totals.accepted += Number(line.accepted);
            totals.delivered += Number(line.delivered);
          }
          return totals.accepted === 2 && totals.delivered === 2 ? true : undefined;
        },
        5_000,
        "progress lines counting both messages",
      );
      expect(progress()[0]).toMatchObject({ level: "info", retrying: 0, dead_lettered: 0 });
      const written = progress().length;
      // A window of four intervals: no progress line comes while nothing happens.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(progress()).toHaveLength(written);
    } finally {
      await service.stop(1_000);
      await receiver.close();
    }
  });
});

describe("the dead-letter line", () => {
  it("names the dead letter's id and the command that replays it with state_dir", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-progress-"));
    harness = await startHarness({ delivery: { max_attempts: 1 } }, { status: () => 400 }, { state_dir: stateDir });
    const response = await harness.post({ sender_id: "a", text: "refused" });
    const { message_id } = (await response.json()) as { message_id: string };
    const logs = harness.logs;
    const letter = await waitFor(() => logs.find((line) => String(line.msg).startsWith("dead letter:")));
    expect(letter).toMatchObject({ level: "error", id: message_id });
    expect(letter.replay).toBe(`npx webhook-channel dead-letters replay --id ${message_id} --config <config.json>`);
  });

  it("names the service's own configuration file in the replay command of node dist/node.js", async () => {
    const receiver = await startReceiver({ port: 0, status: () => 400 });
    const config = await writeTempConfig({
      state_dir: await mkdtemp(join(tmpdir(), "webhook-channel-progress-")),
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          webhook: { bind: "127.0.0.1:0", outbound_url: receiver.url, delivery: { max_attempts: 1 } },
        },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    const spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: "spawned-secret-0123456789" });
    try {
      const response = await fetch(await listeningUrl(spawned), {
        method: "POST",
        headers: { authorization: "Bearer spawned-secret-0123456789", "content-type": "application/json" },
        body: JSON.stringify({ sender_id: "a", text: "refused" }),
      });
      const { message_id } = (await response.json()) as { message_id: string };
      const letter = await waitFor(() =>
        spawned.lines
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .find((line) => String(line.msg).startsWith("dead letter:")),
      );
      expect(letter.replay).toBe(`npx webhook-channel dead-letters replay --id ${message_id} --config ${config}`);
    } finally {
      spawned.child.kill("SIGKILL");
      await receiver.close();
    }
  });

  it("quotes a configuration path that a shell would split", () => {
    expect(replayHintFor({ configPath: "/srv/my config's.json", durable: true, admin: undefined })("id1")).toBe(
      "npx webhook-channel dead-letters replay --id id1 --config '/srv/my config'\\''s.json'",
    );
  });

  it("says a dead letter is not kept without state_dir and without the admin API", async () => {
    harness = await startHarness({ delivery: { max_attempts: 1 } }, { status: () => 400 });
    await harness.post({ sender_id: "a", text: "refused" });
    const logs = harness.logs;
    const letter = await waitFor(() => logs.find((line) => String(line.msg).startsWith("dead letter:")));
    expect(String(letter.replay)).toContain("not kept");
  });

  it("with the admin API and no state_dir, names the command that replays the letter kept in memory", async () => {
    harness = await startHarness(
      { delivery: { max_attempts: 1 } },
      { status: () => 400 },
      { admin: { token_env: "ADMIN_SECRET" } },
      { ADMIN_SECRET: "admin-secret-0123456789abcdefghijklmnopqrstuv" },
    );
    await harness.post({ sender_id: "a", text: "refused" });
    const logs = harness.logs;
    const letter = await waitFor(() => logs.find((line) => String(line.msg).startsWith("dead letter:")));
    expect(String(letter.replay)).not.toContain("not kept");
    expect(String(letter.replay)).toContain(
      `dead-letters replay --id ${String(letter.id)} --url ${harness.baseUrl} --admin-token-env ADMIN_SECRET`,
    );
  });
});
