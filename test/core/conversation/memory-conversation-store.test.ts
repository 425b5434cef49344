import { describe, expect, it } from "vitest";
import type { ConversationTurn } from "../../../src/core/conversation/conversation-store.js";
import { createMemoryConversationStore } from "../../../src/core/conversation/memory-conversation-store.js";

const HOUR = 3_600_000;
const START = 1_000 * HOUR;

const turn = (text: string, at: number): ConversationTurn => ({ role: "user", text, at });
const texts = (turns: readonly ConversationTurn[]) => turns.map((entry) => entry.text);

/** A store over a clock the test moves. */
function storeAt(retentionHours?: number) {
  let now = START;
  const store = createMemoryConversationStore({
    now: () => now,
    ...(retentionHours === undefined ? {} : { retentionHours }),
  });
  return {
    store,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe("the in-memory conversation store's retention", () => {
  it("leaves out a turn once it is older than the retention, while newer turns stay", async () => {
    const { store, advance } = storeAt(2);
    await store.append("c", [turn("first", START)]);
    advance(HOUR);
    await store.append("c", [turn("second", START + HOUR)]);
    expect(texts(await store.history("c", 10))).toEqual(["first", "second"]);
    advance(HOUR + 1);
    expect(texts(await store.history("c", 10))).toEqual(["second"]);
    advance(HOUR);
    expect(await store.history("c", 10)).toEqual([]);
  });

  it("keeps turns for 720 hours by default", async () => {
    const { store, advance } = storeAt();
    await store.append("c", [turn("first", START)]);
    advance(720 * HOUR);
    expect(texts(await store.history("c", 10))).toEqual(["first"]);
    advance(1);
    expect(await store.history("c", 10)).toEqual([]);
  });

  it("forgets a conversation untouched for the retention, not after a day", async () => {
    const { store, advance } = storeAt(48);
    await store.append("c", [turn("first", START)]);
    advance(25 * HOUR);
    expect(texts(await store.history("c", 10))).toEqual(["first"]);
    advance(24 * HOUR);
    await store.append("c", [turn("again", START + 49 * HOUR)]);
    expect(texts(await store.history("c", 10))).toEqual(["again"]);
  });

  it("does not keep a turn appended already older than the retention", async () => {
    const { store } = storeAt(1);
    await store.append("c", [turn("stale", START - 2 * HOUR), turn("fresh", START)]);
    expect(texts(await store.history("c", 10))).toEqual(["fresh"]);
  });

  it("keeps its bound on conversations whatever the retention", async () => {
    let now = START;
    const store = createMemoryConversationStore({ now: () => now, maxConversations: 2, retentionHours: 87_600 });
    for (const key of ["a", "b", "c"]) {
      await store.append(key, [turn(key, now)]);
      now += 1;
    }
    expect(await store.history("a", 10)).toEqual([]);
    expect(texts(await store.history("c", 10))).toEqual(["c"]);
  });

  it("keeps its bound on the characters of every conversation: the least recently used go, then a lone one's oldest turns", async () => {
    let now = START;
    const store = createMemoryConversationStore({ now: () => now, maxCharacters: 10, retentionHours: 87_600 });
    for (const key of ["a", "b", "c"]) {
      await store.append(key, [turn(`${key}1234`, now)]);
      now += 1;
    }
    // Three conversations of five characters each: the least recently used went.
    expect(await store.history("a", 10)).toEqual([]);
    expect(texts(await store.history("b", 10))).toEqual(["b1234"]);
    await store.append("c", [turn("c5678", now), turn("c9012", now)]);
    // Alone over the bound, the newest conversation keeps its newest turns within it.
    expect(await store.history("b", 10)).toEqual([]);
    expect(texts(await store.history("c", 10))).toEqual(["c5678", "c9012"]);
  });
});
