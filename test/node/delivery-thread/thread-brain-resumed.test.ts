/**
 * A brain's pause met on the delivery thread, told to the operator URL as `brain.paused`: when that
 * thread dies and a new one takes the pause over, the pause's end is still told (`brain.resumed`),
 * or an operator paged by the pause would never hear that it ended.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import type { RunHooks } from "../../../src/core/consumer/create-consumer.js";
import { type Job, newJob } from "../../../src/core/lifecycle/job.js";
import type { OperatorEventInput } from "../../../src/core/operator-events/operator-event.js";
import { type DeliveryThread, startDeliveryThread } from "../../../src/node/delivery-thread/delivery-thread.js";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { deliveryWorkerEntry } from "../../support/delivery-worker-entry.js";
import { createLogSink } from "../../support/log-sink.js";
import {
  type OpenAiCompatibleServer,
  rateLimited,
  startOpenAiCompatibleServer,
} from "../../support/openai-compatible-server.js";
import { waitFor } from "../../support/wait-for.js";

let thread: DeliveryThread | undefined;
let receiver: Receiver | undefined;
let model: OpenAiCompatibleServer | undefined;

afterEach(async () => {
  await thread?.close(1_000);
  await receiver?.close();
  await model?.close();
  thread = undefined;
  receiver = undefined;
  model = undefined;
});

const hooks: RunHooks = { firstSequence: 1, save: async () => undefined };

const jobFor = (id: string, text: string): Job =>
  newJob({ id, channel: "webhook", receivedAt: Date.now(), message: { senderId: "ada", conversationId: "ada", text } });

function configFor(outboundUrl: string, baseUrl: string): Config {
  const result = validateConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", outbound_url: outboundUrl, delivery: { initial_delay_ms: 20 } },
      },
    ],
    brains: { llm: { type: "openai", base_url: baseUrl, model: "test-model" } },
    routes: [{ channel: "webhook", brain: "llm" }],
    delivery_thread: true,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe("a brain's pause on a delivery thread that dies", () => {
  it("is told as resumed when it ends, by the thread that took it over", async () => {
    receiver = await startReceiver({ port: 0 });
    model = await startOpenAiCompatibleServer();
    model.failNext(rateLimited(3));
    const events: OperatorEventInput[] = [];
    const { logger } = createLogSink();
    thread = await startDeliveryThread({
      entry: deliveryWorkerEntry(),
      config: configFor(receiver.url, model.baseUrl),
      env: {},
      logger,
      operatorEvents: { emit: (event) => events.push(event) },
    });
    expect((await thread.run(jobFor("m-1", "first"), hooks)).kind).toBe("retry");
    await waitFor(() => events.find((event) => event.type === "brain.paused"), 5_000, "brain.paused");
    await thread.terminate();
    // The new thread starts paused where the dead one was: the run is held, the server not asked.
    const held = await thread.run(jobFor("m-2", "second"), hooks);
    expect(held).toMatchObject({ kind: "retry" });
    expect(held.job.lastError?.message).toContain("is paused");
    await waitFor(() => events.find((event) => event.type === "brain.resumed"), 8_000, "brain.resumed");
    expect(events.map((event) => event.type)).toEqual(["brain.paused", "brain.resumed"]);
  });
});
