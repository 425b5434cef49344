import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryConversationStore } from "../../src/core/conversation/memory-conversation-store.js";
import { newJob } from "../../src/core/lifecycle/job.js";
import { ruleOn } from "../../src/core/receiver/pass-circuit.js";
import { createAnalyticsEngineMetrics } from "../../src/workers/analytics-engine-metrics.js";
import { createObjectConsumer } from "../../src/workers/conversation/object-consumer.js";
import { partsFor } from "../../src/workers/environment-parts.js";
import worker from "../../src/workers/index.js";
import { captureLogs } from "./support/fake-receiver.js";
import { channelConfig, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

/** A stand-in for the Analytics Engine dataset binding: it keeps what is written. */
function fakeDataset() {
  const points: { blobs?: string[]; doubles?: number[]; indexes?: string[] }[] = [];
  return { points, writeDataPoint: (point: (typeof points)[number]) => void points.push(point) };
}

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Runs one message through the consumer that a conversation object builds from an environment
 * with `dataset` as METRICS, the receiver answering `status`; the outcome's kind.
 */
async function runOneJob(dataset: ReturnType<typeof fakeDataset>, status: number): Promise<string> {
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(null, { status }));
  const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET, METRICS: dataset });
  const built = await partsFor(env);
  if (!built.ok) throw new Error(built.problems.join("; "));
  const consumer = await createObjectConsumer(built.parts, {
    store: createMemoryConversationStore({ now: () => Date.now() }),
  });
  const message = { conversationId: "c1", senderId: "u1", text: "hi" };
  const outcome = await consumer.run(
    newJob({ id: crypto.randomUUID(), channel: "webhook", receivedAt: Date.now(), message }),
  );
  // As a receiver that is up rules on it: an unanswered POST is its verdict.
  return ruleOn(outcome, false).kind;
}

function post(body: unknown, secret = SECRET): Request {
  return new Request("https://channel.example/webhook", {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("Workers metrics to Analytics Engine", () => {
  it("writes a request and an accepted point for a 200, a request point with the code for a 401", async () => {
    captureLogs();
    const dataset = fakeDataset();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET, METRICS: dataset });
    expect((await worker.fetch(post({ sender_id: "u1", text: "hi" }), env)).status).toBe(200);
    expect((await worker.fetch(post({ sender_id: "u1", text: "hi" }, "wrong"), env)).status).toBe(401);
    expect(dataset.points).toEqual([
      { blobs: ["accepted", "webhook", "", ""], doubles: [1, 0], indexes: ["webhook"] },
      { blobs: ["request", "webhook", "200", ""], doubles: [1, 0], indexes: ["webhook"] },
      { blobs: ["request", "webhook", "401", ""], doubles: [1, 0], indexes: ["webhook"] },
    ]);
  });

  it("writes brain, delivery and end-to-end points from the consumer a conversation object builds", async () => {
    captureLogs();
    const dataset = fakeDataset();
    expect(await runOneJob(dataset, 200)).toBe("done");
    expect(dataset.points.map((point) => [point.blobs?.[0], point.blobs?.[2], point.blobs?.[3]])).toEqual([
      ["brain_call", "echo", "ok"],
      ["delivered", "", ""],
      ["end_to_end", "", ""],
    ]);
    for (const point of dataset.points) expect(point.doubles?.[1]).toBeGreaterThanOrEqual(0);
  });

  it("writes a retry point when a reply POST fails and will be tried again", async () => {
    captureLogs();
    const dataset = fakeDataset();
    expect(await runOneJob(dataset, 503)).toBe("retry");
    expect(dataset.points.map((point) => point.blobs?.[0])).toEqual(["brain_call", "retry"]);
  });

  it("writes one paused point per pause, though a lengthened pause is reported again, and one resumed point", () => {
    const dataset = fakeDataset();
    const metrics = createAnalyticsEngineMetrics(dataset);
    metrics.brainPaused("bot", true, 2_000);
    metrics.brainPaused("bot", true, 9_000);
    metrics.brainPaused("bot", false);
    metrics.brainPaused("bot", true, 20_000);
    expect(dataset.points).toEqual(
      ["paused", "resumed", "paused"].map((state) => ({
        blobs: ["brain_paused", "", "bot", state],
        doubles: [1, 0],
        indexes: [""],
      })),
    );
  });

  it("records nothing, and serves no /metrics, without the METRICS binding", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    expect((await worker.fetch(post({ sender_id: "u1", text: "hi" }), env)).status).toBe(200);
    expect((await worker.fetch(new Request("https://channel.example/metrics"), env)).status).toBe(404);
  });
});
