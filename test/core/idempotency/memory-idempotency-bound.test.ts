import { describe, expect, it } from "vitest";
import { createMemoryIdempotencyStore } from "../../../src/core/idempotency/memory-idempotency-store.js";

describe("the in-memory idempotency store's bound", () => {
  it("is per channel: one channel's many keys push out its own oldest, never another channel's", async () => {
    const store = createMemoryIdempotencyStore(3);
    const now = Date.now();
    const victim = { messageId: "v1", conversationId: "c" };
    expect(await store.reserve("b", "victim-key", victim, now)).toBeUndefined();
    await store.commit("b", "victim-key", "v1", now);
    for (let index = 0; index < 10; index += 1) {
      await store.reserve("a", `flood-${index}`, { messageId: `m${index}`, conversationId: "c" }, now);
    }
    expect(await store.reserve("b", "victim-key", { messageId: "v2", conversationId: "c" }, now + 1)).toEqual({
      record: victim,
      committed: true,
    });
    // Channel a kept its newest three.
    expect(await store.reserve("a", "flood-0", { messageId: "x", conversationId: "c" }, now + 1)).toBeUndefined();
    expect(await store.reserve("a", "flood-9", { messageId: "y", conversationId: "c" }, now + 1)).toMatchObject({
      record: { messageId: "m9" },
    });
  });
});
