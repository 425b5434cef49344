import { describe, expect, it } from "vitest";
import { keepDeadLetter } from "../../../src/core/dead-letters/keep-dead-letter.js";
import { createMemoryDeadLetterStore } from "../../../src/core/dead-letters/memory-dead-letter-store.js";
import { deadLetter, idOf, MANY } from "../../shared/store-contracts/dead-letter-contract-letters.js";
import { createLogSink } from "../../support/log-sink.js";

describe("the in-memory dead letters' bound on characters", () => {
  it("drops a channel's oldest letters while they hold more than the bound, keeping the newest, and says how many", () => {
    // Six characters a letter: five of text, one of error.
    const store = createMemoryDeadLetterStore(() => true, 13);
    const base = Date.now() - 10_000;
    const letters = [0, 1, 2].map((at) => deadLetter("webhook", base + at, { text: "x".repeat(5), error: "e" }));
    const other = deadLetter("other", base, { text: "y".repeat(5), error: "e" });
    expect(store.keep(other, MANY)).toMatchObject({ dropped: 0 });
    expect(store.keep(letters[0] ?? other, MANY)).toMatchObject({ dropped: 0 });
    expect(store.keep(letters[1] ?? other, MANY)).toMatchObject({ dropped: 0 });
    expect(store.keep(letters[2] ?? other, MANY)).toEqual({ dropped: 1, droppedTotal: 1, maxCharacters: 13 });
    expect(store.page({ channel: "webhook", after: null, limit: 10 }).letters.map((stored) => stored.id)).toEqual(
      letters.slice(1).map(idOf),
    );
    // Another channel's letters are its own: untouched.
    expect(store.one(idOf(other))).toBeDefined();
    // A letter alone over the bound is kept.
    const huge = deadLetter("huge", base, { text: "z".repeat(100), error: "e" });
    expect(store.keep(huge, MANY)).toMatchObject({ dropped: 0 });
    expect(store.one(idOf(huge))).toBeDefined();
  });

  it("names the bound it reached in its warning: the characters, or the count", () => {
    const logs = createLogSink();
    const bound = { max: 3, logger: logs.logger };
    const store = createMemoryDeadLetterStore(() => true, 13);
    const base = Date.now() - 10_000;
    for (const at of [0, 1, 2]) {
      keepDeadLetter(store, deadLetter("webhook", base + at, { text: "x".repeat(5), error: "e" }), bound);
    }
    expect(logs.lines.map((line) => [line.msg, line.max_characters, line.max_dead_letters])).toEqual([
      ["dead letters over the characters a channel keeps in memory: the oldest were dropped", 13, undefined],
    ]);
    for (const at of [3, 4, 5, 6])
      keepDeadLetter(store, deadLetter("small", base + at, { text: "", error: "e" }), bound);
    expect(logs.lines.at(-1)).toMatchObject({
      msg: "dead letters over admin.max_dead_letters: the oldest were dropped",
      channel: "small",
      max_dead_letters: 3,
      dropped: 1,
    });
  });
});
