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
function gatedQueue(): InboundQueue & { queued: QueuedMessage[]; settle: (ok: boolean) => void; waiting: boolean } {
  const queued: QueuedMessage[] = [];
  let settle: (ok: boolean) => void = () => undefined;
  const queue = {
    queued,
    waiting: false,
    settle: (ok: boolean) => settle(ok),
    enqueue(message: QueuedMessage) {
      queue.waiting = true;
      return new Promise<void>((resolve, reject) => {
        settle = (ok) => {
          queue.waiting = false;
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
  return queue;
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

const post = (key: string, body = '{"sender_id":"a","text":"hi"}') =>
  new Request("http://x/webhook", {
    method: "POST",
    headers: { authorization: "Bearer s", "content-type": "application/json", "idempotency-key": key },
    body,
  });

/** A queue that takes every message at once. */
function takingQueue(): InboundQueue & { queued: QueuedMessage[] } {
  const queued: QueuedMessage[] = [];
  return {
    queued,
    enqueue(message) {
      queued.push(message);
      return Promise.resolve();
    },
  };
}

describe("Idempotency-Key while the first request is still being queued", () => {
  it("answers a concurrent duplicate 409 and never 200 for a message that was not queued", async () => {
    const queue = gatedQueue();
    const app = appWith(queue);
    const first = app.request(post("k1"));
    // Once the first request holds its key and waits in the queue.
    await until(() => queue.waiting);
    const duplicate = await app.request(post("k1"));
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect(await duplicate.json()).toMatchObject({ code: "request_in_progress" });

    queue.settle(false);
    expect((await first).status).toBe(503);
    expect(queue.queued).toEqual([]);

    const retried = app.request(post("k1"));
    await until(() => queue.waiting);
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

describe("Idempotency-Key reused with another body", () => {
  it("answers 422 idempotency_key_reused once the first message was accepted, and queues nothing more", async () => {
    const queue = takingQueue();
    const app = appWith(queue);
    const first = await app.request(post("k1"));
    const { message_id } = (await first.json()) as { message_id: string };

    const other = await app.request(post("k1", '{"sender_id":"a","text":"another"}'));
    expect(other.status).toBe(422);
    expect(other.headers.get("content-type")).toBe("application/problem+json");
    expect(other.headers.get("retry-after")).toBeNull();
    expect(await other.json()).toMatchObject({ code: "idempotency_key_reused", status: 422 });
    // The same message in other bytes is another body: the retry must resend the first bytes.
    const reordered = await app.request(post("k1", '{"text":"hi","sender_id":"a"}'));
    expect(reordered.status).toBe(422);

    const retry = await app.request(post("k1"));
    expect(await retry.json()).toEqual({ status: "accepted", message_id, conversation_id: "a" });
    expect(queue.queued.map((message) => message.id)).toEqual([message_id]);
  });

  it("answers 422 rather than 409 while the first request is still being accepted", async () => {
    const queue = gatedQueue();
    const app = appWith(queue);
    const first = app.request(post("k2"));
    await until(() => queue.waiting);
    const other = await app.request(post("k2", '{"sender_id":"a","text":"another"}'));
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: "idempotency_key_reused" });
    queue.settle(true);
    expect((await first).status).toBe(200);
    expect(queue.queued).toHaveLength(1);
  });

  it("keeps the body's fingerprint with the queued message, for a durable queue to store with the key", async () => {
    const queue = takingQueue();
    await appWith(queue).request(post("k3"));
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode('{"sender_id":"a","text":"hi"}'));
    expect(queue.queued[0]?.idempotencyFingerprint).toBe(btoa(String.fromCharCode(...new Uint8Array(digest))));
  });
});

/** Waits, a turn at a time, until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 1));
}
