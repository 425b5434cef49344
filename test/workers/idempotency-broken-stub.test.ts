/**
 * A reserve whose answer is lost for real inside workerd: the object takes the key, then is
 * reset before it answers (as when the connection drops or the object is reset after the write).
 * Docs (http-api.md, Idempotency-Key): "On Workers the service then deletes that request's
 * reservation at once, and only that request's, so the client's retry is accepted."
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { idempotencyId } from "../../src/core/idempotency/idempotency-store.js";
import { createDurableIdempotencyStore } from "../../src/workers/idempotency/durable-idempotency-store.js";
import { IdempotencyObject } from "../../src/workers/idempotency/idempotency-object.js";

const original = IdempotencyObject.prototype.reserve;

afterEach(() => {
  IdempotencyObject.prototype.reserve = original;
});

describe("Durable Object idempotency store: a reserve whose answer is really lost", () => {
  it("releases the reservation so the client's retry is accepted, not 409 for the lease", async () => {
    const channel = `channel-${crypto.randomUUID()}`;
    const key = `key-${crypto.randomUUID()}`;
    const record = { messageId: crypto.randomUUID(), conversationId: "c1" };
    let lose = true;
    IdempotencyObject.prototype.reserve = async function (this: IdempotencyObject, ...args) {
      const answer = await original.apply(this, args);
      if (lose) {
        lose = false;
        // The write is durable, then the object is reset before its answer gets out.
        const ctx = (this as unknown as { ctx: DurableObjectState }).ctx;
        await ctx.storage.sync?.();
        ctx.abort("reset after the write");
      }
      return answer;
    };
    const store = createDurableIdempotencyStore(env.IDEMPOTENCY);
    const now = Date.now();
    const first = await store.reserve(channel, key, record, now).then(
      () => "answered",
      (error: unknown) => `failed: ${String(error)}`,
    );
    expect(first).toMatch(/^failed/);
    IdempotencyObject.prototype.reserve = original;

    const stub = env.IDEMPOTENCY.get(env.IDEMPOTENCY.idFromName(idempotencyId(channel, key)));
    const left = await runInDurableObject(stub, (_object, state) =>
      state.storage.sql.exec("SELECT message_id, committed FROM reservation").toArray(),
    );
    // The client's retry, a second later, with the same key and body.
    const retry = { messageId: crypto.randomUUID(), conversationId: "c1" };
    const answer = await store.reserve(channel, key, retry, now + 1_000);
    expect({ first, left, answer }).toEqual({ first, left: [], answer: undefined });
  });
});
