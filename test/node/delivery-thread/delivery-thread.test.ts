import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import type { RunHooks } from "../../../src/core/consumer/create-consumer.js";
import { type Job, newJob } from "../../../src/core/lifecycle/job.js";
import { type DeliveryThread, startDeliveryThread } from "../../../src/node/delivery-thread/delivery-thread.js";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { deliveryWorkerEntry } from "../../support/delivery-worker-entry.js";
import { failure } from "../../support/failure.js";
import { createLogSink } from "../../support/log-sink.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import {
  type OpenAiCompatibleServer,
  rateLimited,
  startOpenAiCompatibleServer,
} from "../../support/openai-compatible-server.js";
import { waitFor } from "../../support/wait-for.js";

/** The hooks of a run whose steps `save` hears of, numbering from 1 (a lane with no reply yet). */
function hooks(save: (job: Job) => unknown): RunHooks {
  return {
    firstSequence: 1,
    save: async (job) => {
      await save(job);
    },
  };
}

let harness: ServiceHarness | undefined;
let thread: DeliveryThread | undefined;
let receiver: Receiver | undefined;
let folder: string | undefined;
let silent: Server | undefined;
let model: OpenAiCompatibleServer | undefined;

afterEach(async () => {
  await harness?.close();
  await thread?.close(1_000);
  await receiver?.close();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  silent?.closeAllConnections();
  silent?.close();
  await model?.close();
  model = undefined;
  silent = undefined;
  harness = undefined;
  thread = undefined;
  receiver = undefined;
  folder = undefined;
});

const bodyOf = (reply: ReceivedReply) => reply.body as { conversation_id: string; sequence: number; text: string };

function configFor(outboundUrl: string, extra: Record<string, unknown> = {}): Config {
  const result = validateConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", outbound_url: outboundUrl, delivery: { initial_delay_ms: 20 } },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    delivery_thread: true,
    ...extra,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

const jobFor = (id: string, text: string): Job =>
  newJob({ id, channel: "webhook", receivedAt: Date.now(), message: { senderId: "ada", conversationId: "ada", text } });

describe("the delivery thread", () => {
  it("delivers every conversation's replies in order when delivery_thread is set", async () => {
    harness = await startHarness({}, {}, { delivery_thread: true });
    const posted: Promise<Response>[] = [];
    for (let index = 0; index < 20; index += 1) {
      posted.push(harness.post({ sender_id: `user-${index % 4}`, text: `message ${index}` }));
    }
    for (const response of await Promise.all(posted)) expect(response.status).toBe(200);
    const replies = harness.replies;
    await waitFor(() => (replies.length === 20 ? true : undefined), 5_000, "twenty replies");
    for (let user = 0; user < 4; user += 1) {
      const own = replies.map(bodyOf).filter((body) => body.conversation_id === `user-${user}`);
      expect(own.map((body) => body.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect(own.map((body) => body.text)).toEqual([0, 1, 2, 3, 4].map((step) => `message ${step * 4 + user}`));
    }
  });

  it("writes the thread's log lines through the main thread's logger", async () => {
    harness = await startHarness({}, {}, { delivery_thread: true, log_level: "debug" });
    expect((await harness.post({ sender_id: "ada", text: "hello" })).status).toBe(200);
    const logs = harness.logs;
    const line = await waitFor(() => logs.find((entry) => entry.msg === "reply delivered"), 5_000, "the debug line");
    expect(line.level).toBe("debug");
    expect(typeof line.reply_id).toBe("string");
  });

  it("refuses to start, with config_invalid, when the thread cannot build its consumer", async () => {
    const error = await failure(
      startHarness(
        { outbound_token_env: "OUT_TOKEN" },
        {},
        { delivery_thread: true },
        { OUT_TOKEN: "receiver-token\n" },
      ),
    );
    expect(error.code).toBe("config_invalid");
    expect(error.message).toContain("OUT_TOKEN");
    expect(error.message).not.toContain("receiver-token");
  });

  it("rejects the runs of a thread that stops, and runs the next job on a new thread", async () => {
    const replies: ReceivedReply[] = [];
    let hang = true;
    receiver = await startReceiver({
      port: 0,
      onReply: (reply) => replies.push(reply),
      status: () => (hang ? "hang" : 200),
    });
    const { logger, lines } = createLogSink();
    thread = await startDeliveryThread({
      entry: deliveryWorkerEntry(),
      config: configFor(receiver.url),
      env: {},
      logger,
    });
    const steps: Job[] = [];
    const stuck = thread.run(
      jobFor("m-1", "first"),
      hooks((job) => steps.push(job)),
    );
    await waitFor(() => (replies.length === 1 ? true : undefined), 5_000, "the first attempt");
    await waitFor(() => (steps.length === 1 ? true : undefined), 5_000, "the brain's step reported");
    await thread.terminate();
    const error = await failure(stuck);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain("the delivery thread stopped");
    // The step the thread reported is what the queue retries from: the brain is not asked again.
    expect(steps.at(-1)?.replies).toHaveLength(1);
    expect(
      lines.some((line) => line.msg === "the delivery thread stopped with runs in hand; they will be retried"),
    ).toBe(true);

    hang = false;
    const outcome = await thread.run(
      jobFor("m-2", "second"),
      hooks(() => undefined),
    );
    expect(outcome.kind).toBe("done");
    await waitFor(() => replies.find((reply) => bodyOf(reply).text === "second"), 5_000, "the second reply");
  });

  it.each([
    ["with metrics", true],
    ["without metrics", false],
  ])("starts a thread that replaces a dead one paused where the dead one's brain was (%s)", async (_, metrics) => {
    receiver = await startReceiver({ port: 0 });
    const brain = await startOpenAiCompatibleServer();
    model = brain;
    brain.failNext(rateLimited(30));
    const { logger } = createLogSink();
    const config = configFor(receiver.url, {
      brains: { llm: { type: "openai", base_url: brain.baseUrl, model: "test-model" } },
      routes: [{ channel: "webhook", brain: "llm" }],
      observability: { metrics },
    });
    thread = await startDeliveryThread({ entry: deliveryWorkerEntry(), config, env: {}, logger });
    expect(
      (
        await thread.run(
          jobFor("m-1", "first"),
          hooks(() => undefined),
        )
      ).kind,
    ).toBe("retry");
    await thread.terminate();
    // The new thread's brain is paused still: the run is held, the server not called.
    const held = await thread.run(
      jobFor("m-2", "second"),
      hooks(() => undefined),
    );
    expect(held).toMatchObject({ kind: "retry" });
    expect(held.job.lastError?.message).toContain("is paused");
    expect(brain.chatBodies()).toHaveLength(1);
  });

  it("with state_dir, does not post a reply whose step the main thread could not journal", async () => {
    folder = await mkdtemp(join(tmpdir(), "webhook-thread-"));
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    const { logger } = createLogSink();
    const config = configFor(receiver.url, { state_dir: folder });
    thread = await startDeliveryThread({ entry: deliveryWorkerEntry(), config, env: {}, logger });
    const outcome = await thread.run(
      jobFor("m-1", "kept back"),
      hooks(() => {
        throw new Error("database is locked");
      }),
    );
    expect(outcome.kind).toBe("retry");
    expect(outcome.job.lastError?.message).toContain("database is locked");
    // A window for a POST that should not come: nothing reaches the receiver.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(replies).toHaveLength(0);

    const saved = await thread.run(
      jobFor("m-2", "sent"),
      hooks(() => undefined),
    );
    expect(saved.kind).toBe("done");
    expect(replies.map((reply) => bodyOf(reply).text)).toEqual(["sent"]);
  });

  it("ends on close, and refuses runs after it", async () => {
    receiver = await startReceiver({ port: 0 });
    const { logger } = createLogSink();
    thread = await startDeliveryThread({
      entry: deliveryWorkerEntry(),
      config: configFor(receiver.url),
      env: {},
      logger,
    });
    expect(
      (
        await thread.run(
          jobFor("m-1", "hi"),
          hooks(() => undefined),
        )
      ).kind,
    ).toBe("done");
    await thread.close(1_000);
    const error = await failure(
      thread.run(
        jobFor("m-2", "late"),
        hooks(() => undefined),
      ),
    );
    expect(error.code).toBe("shutting_down");
  });

  it("stops a thread still waiting on a brain when the close timeout is up", async () => {
    // A bot that never answers: a brain call cannot be aborted, so only stopping the thread ends it.
    let asked = 0;
    silent = createServer(() => {
      asked += 1;
    });
    await new Promise<void>((resolve) => silent?.listen(0, "127.0.0.1", resolve));
    const botUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/bot`;
    receiver = await startReceiver({ port: 0 });
    const { logger, lines } = createLogSink();
    const config = configFor(receiver.url, {
      brains: { bot: { type: "http", url: botUrl, timeout_ms: 60_000 } },
      routes: [{ channel: "webhook", brain: "bot" }],
    });
    thread = await startDeliveryThread({ entry: deliveryWorkerEntry(), config, env: {}, logger });
    const stuck = thread.run(
      jobFor("m-1", "hello?"),
      hooks(() => undefined),
    );
    await waitFor(() => (asked === 1 ? true : undefined), 5_000, "the brain call to reach the bot");
    const startedAt = Date.now();
    await thread.close(300);
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    expect(lines.some((line) => line.msg === "the delivery thread did not end in time; stopping it")).toBe(true);
    const error = await failure(stuck);
    expect(error.retryable).toBe(true);
  });
});
