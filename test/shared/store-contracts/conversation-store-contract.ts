/**
 * The behaviour every {@link ConversationStore} shares, as one suite run against each
 * implementation (memory, SQLite, the Durable Object). Runtime-neutral: no `node:` or
 * `cloudflare:` imports, so it runs on Node and inside workerd alike.
 *
 * Implementations bound what they keep (turns per conversation, conversations, age) and
 * those bounds differ, so the suite stays well inside them: a few turns, read at once. Every
 * store under test keeps turns for the default `conversation_memory.retention_hours`, by the
 * real clock: turns are timed from now, and the retention's cases place a turn either side of
 * its cutoff, with a margin no test run comes near.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONVERSATION_RETENTION_HOURS } from "../../../src/core/config/conversation-memory-schema.js";
import type { ConversationStore, ConversationTurn } from "../../../src/core/conversation/conversation-store.js";

/** A conversation key no other test uses, so durable state from other tests never interferes. */
const freshKey = (): string => `conversation-${crypto.randomUUID()}`;

/** A time `offset` milliseconds from now: turns of a conversation under way. */
const soon = (offset: number): number => Date.now() + offset;
const RETENTION_MS = DEFAULT_CONVERSATION_RETENTION_HOURS * 3_600_000;
/** Far enough from the retention's cutoff that a slow run cannot move a turn across it. */
const MARGIN_MS = 600_000;

const user = (text: string, offset: number, at = soon(offset)): ConversationTurn => ({ role: "user", text, at });
const assistant = (text: string, offset: number, at = soon(offset)): ConversationTurn => ({
  role: "assistant",
  text,
  at,
});
const texts = (turns: readonly ConversationTurn[]): (string | undefined)[] => turns.map((turn) => turn.text);

export function conversationStoreContract(
  name: string,
  make: () => Promise<ConversationStore> | ConversationStore,
): void {
  describe(`ConversationStore contract: ${name}`, () => {
    it("has no turns for a conversation never appended to", async () => {
      const store = await make();
      expect(await store.history(freshKey(), 10)).toEqual([]);
    });

    it("returns appended turns oldest first", async () => {
      const store = await make();
      const key = freshKey();
      await store.append(key, [user("one", 1), assistant("two", 2), user("three", 3)]);
      expect(texts(await store.history(key, 10))).toEqual(["one", "two", "three"]);
    });

    it("keeps the order of turns appended over several calls", async () => {
      const store = await make();
      const key = freshKey();
      await store.append(key, [user("one", 1)]);
      await store.append(key, [assistant("two", 2), user("three", 3)]);
      await store.append(key, [assistant("four", 4)]);
      expect(texts(await store.history(key, 10))).toEqual(["one", "two", "three", "four"]);
    });

    it("returns the last N turns oldest first", async () => {
      const store = await make();
      const key = freshKey();
      await store.append(key, [user("one", 1), assistant("two", 2), user("three", 3), assistant("four", 4)]);
      expect(texts(await store.history(key, 2))).toEqual(["three", "four"]);
      expect(texts(await store.history(key, 1))).toEqual(["four"]);
      expect(texts(await store.history(key, 4))).toEqual(["one", "two", "three", "four"]);
    });

    it("returns no turns for a limit of 0", async () => {
      const store = await make();
      const key = freshKey();
      await store.append(key, [user("one", 1)]);
      expect(await store.history(key, 0)).toEqual([]);
    });

    it("keeps every field of a turn", async () => {
      const store = await make();
      const key = freshKey();
      const turns: ConversationTurn[] = [
        { role: "user", text: "look", mediaUrl: "https://media.example/cat.png", mediaType: "image/png", at: soon(0) },
        { role: "assistant", text: "a cat", at: soon(1) },
        { role: "user", mediaUrl: "https://media.example/voice.ogg", mediaType: "audio/ogg", at: soon(2) },
      ];
      await store.append(key, turns);
      expect(await store.history(key, 10)).toEqual(turns);
    });

    it("appending no turns changes nothing", async () => {
      const store = await make();
      const key = freshKey();
      await store.append(key, []);
      expect(await store.history(key, 10)).toEqual([]);
      await store.append(key, [user("one", 1)]);
      await store.append(key, []);
      expect(texts(await store.history(key, 10))).toEqual(["one"]);
    });

    it("leaves a turn older than the retention out of the history", async () => {
      const store = await make();
      const key = freshKey();
      const cutoff = Date.now() - RETENTION_MS;
      await store.append(key, [
        user("too old", 0, cutoff - MARGIN_MS),
        assistant("old but kept", 0, cutoff + MARGIN_MS),
        user("new", 0),
      ]);
      expect(texts(await store.history(key, 10))).toEqual(["old but kept", "new"]);
      expect(texts(await store.history(key, 2))).toEqual(["old but kept", "new"]);
    });

    it("leaves turns older than the retention out after later appends, and counts the limit without them", async () => {
      const store = await make();
      const key = freshKey();
      const cutoff = Date.now() - RETENTION_MS;
      await store.append(key, [user("first", 0, cutoff - 2 * MARGIN_MS), assistant("second", 0, cutoff - MARGIN_MS)]);
      expect(await store.history(key, 10)).toEqual([]);
      await store.append(key, [user("third", 0)]);
      await store.append(key, [assistant("fourth", 1)]);
      expect(texts(await store.history(key, 10))).toEqual(["third", "fourth"]);
      expect(texts(await store.history(key, 1))).toEqual(["fourth"]);
    });

    it("keeps conversations apart", async () => {
      const store = await make();
      const first = freshKey();
      const second = freshKey();
      await store.append(first, [user("first one", 1)]);
      await store.append(second, [user("second one", 2)]);
      await store.append(first, [assistant("first two", 3)]);
      expect(texts(await store.history(first, 10))).toEqual(["first one", "first two"]);
      expect(texts(await store.history(second, 10))).toEqual(["second one"]);
    });
  });
}
