import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/core/app/create-app.js";
import type { InboundQueue } from "../../../src/core/app/inbound-queue.js";
import { ChannelError } from "../../../src/core/channel-error.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { createMemoryIdempotencyStore } from "../../../src/core/idempotency/memory-idempotency-store.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";

/** A queue whose next enqueue waits for the test to let it succeed or fail. */
function gatedQueue(): InboundQueue & { queued: QueuedMessage[]; settle: (ok: boolean) => void } {
  const queued: QueuedMessage[] = [];
  let settle: (ok: boolean) => void = () => undefined;
  return {
    queued,
    settle: (ok) => settle(ok),
    enqueue(message) {
      return new Promise<void>((resolve, reject) => {
        settle = (ok) => {
          if (!ok)
            reject(new ChannelError("buffer_full", "full", { status: 503, retryable: true, retryAfterSeconds: 1 }));
          else {
            queued.push(message);
            resolve();
          }
        };
      });
    },
  };
}

function appWith(queue: InboundQueue) {
  const result = validateConfig(configDocument());
  if (!result.ok) throw new Error("bad config");
  let next = 0;
  return createApp({
    channels: result.config.channels,
    secretsFor: () => ["s"],
    queueFor: () => queue,
    clock: { now: () => 1_000 },
    newId: () => `id${++next}`,
    logger: createLogSink().logger,
    idempotency: createMemoryIdempotencyStore(),
  });
}

const post = (key: string) =>
  new Request("http://x/webhook", {
    method: "POST",
    headers: { authorization: "Bearer s", "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ sender_id: "a", text: "hi" }),
  });

describe("Idempotency-Key while the first request is still being queued", () => {
  it("answers a concurrent duplicate 409 and never 200 for a message that was not queued", async () => {
    const queue = gatedQueue();
    const app = appWith(queue);
    const first = app.request(post("k1"));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const duplicate = await app.request(post("k1"));
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect(await duplicate.json()).toMatchObject({ code: "request_in_progress" });

    queue.settle(false);
    expect((await first).status).toBe(503);
    expect(queue.queued).toEqual([]);

    const retried = app.request(post("k1"));
    await new Promise((resolve) => setTimeout(resolve, 5));
    queue.settle(true);
    const accepted = await retried;
    expect(accepted.status).toBe(200);
    const { message_id } = (await accepted.json()) as { message_id: string };
    expect(queue.queued.map((message) => message.id)).toEqual([message_id]);

    const again = await app.request(post("k1"));
    expect(await again.json()).toEqual({ status: "accepted", message_id, conversation_id: "a" });
    expect(queue.queued).toHaveLength(1);
  });
});
