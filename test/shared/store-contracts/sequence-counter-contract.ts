/**
 * The behaviour every {@link SequenceCounter} shares, as one suite run against each
 * implementation (memory, SQLite, the Durable Object). Runtime-neutral: no `node:` or
 * `cloudflare:` imports, so it runs on Node and inside workerd alike.
 */
import { describe, expect, it } from "vitest";
import type { SequenceCounter } from "../../../src/core/conversation/sequence-counter.js";

/** A conversation key no other test uses, so durable state from other tests never interferes. */
const freshKey = (): string => `conversation-${crypto.randomUUID()}`;

export function sequenceCounterContract(name: string, make: () => Promise<SequenceCounter> | SequenceCounter): void {
  describe(`SequenceCounter contract: ${name}`, () => {
    it("reserves consecutive sequence numbers starting at 1 per conversation", async () => {
      const counter = await make();
      const key = freshKey();
      expect(await counter.reserve(key, 1)).toBe(1);
      expect(await counter.reserve(key, 1)).toBe(2);
      expect(await counter.reserve(key, 1)).toBe(3);
    });

    it("a reservation of several numbers returns the first and holds the rest", async () => {
      const counter = await make();
      const key = freshKey();
      expect(await counter.reserve(key, 3)).toBe(1);
      expect(await counter.reserve(key, 1)).toBe(4);
      expect(await counter.reserve(key, 2)).toBe(5);
      expect(await counter.reserve(key, 1)).toBe(7);
    });

    it("keeps conversations apart", async () => {
      const counter = await make();
      const first = freshKey();
      const second = freshKey();
      expect(await counter.reserve(first, 2)).toBe(1);
      expect(await counter.reserve(second, 1)).toBe(1);
      expect(await counter.reserve(first, 1)).toBe(3);
      expect(await counter.reserve(second, 1)).toBe(2);
    });

    it("keeps conversations apart when they reserve at the same time", async () => {
      const counter = await make();
      const keys = [freshKey(), freshKey(), freshKey()];
      const firsts = await Promise.all(keys.map((key) => counter.reserve(key, 2)));
      expect(firsts).toEqual([1, 1, 1]);
      const seconds = await Promise.all(keys.map((key) => counter.reserve(key, 1)));
      expect(seconds).toEqual([3, 3, 3]);
    });
  });
}
