/**
 * The behaviour every {@link ConversationStore} shares, as one suite run against each
 * implementation (memory, SQLite, the Durable Object). Runtime-neutral: no `node:` or
 * `cloudflare:` imports, so it runs on Node and inside workerd alike.
 *
 * Implementations bound what they keep (turns per conversation, conversations, age) and
 * those bounds differ, so the suite stays well inside them: a few turns, read at once.
 */
import { describe, expect, it } from "vitest";
import type { ConversationStore, ConversationTurn } from "../../../src/core/conversation/conversation-store.js";

/** A conversation key no other test uses, so durable state from other tests never interferes. */
const freshKey = (): string => `conversation-${crypto.randomUUID()}`;

const user = (text: string, at: number): ConversationTurn => ({ role: "user", text, at });
const assistant = (text: string, at: number): ConversationTurn => ({ role: "assistant", text, at });
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
        { role: "user", text: "look", mediaUrl: "https://media.example/cat.png", mediaType: "image/png", at: 1_000 },
        { role: "assistant", text: "a cat", at: 1_001 },
        { role: "user", mediaUrl: "https://media.example/voice.ogg", mediaType: "audio/ogg", at: 1_002 },
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
