/**
 * The dead-letter store contract's cases that take letters off the list (replay and delete),
 * registered by `deadLetterStoreContract` in its own describe block. A replay must answer
 * exactly the letters it took: the admin records a `replayed` event for each of them, so a
 * letter deleted or replayed elsewhere first must not be among them.
 */
import { expect, it } from "vitest";
import {
  byId,
  bySubjectId,
  type DeadLetterStoreUnderTest,
  deadLetter,
  freshChannel,
  idOf,
  listedIds,
  MANY,
  pastBase,
  subjectOf,
} from "./dead-letter-contract-letters.js";

/**
 * Registers the replay and delete cases against the store `make` gives; with `buriedByJobs`,
 * also what a replay between a job's death and its letter's keep leaves.
 */
export function deadLetterRemovalCases(
  make: () => Promise<DeadLetterStoreUnderTest> | DeadLetterStoreUnderTest,
  buriedByJobs: boolean,
): void {
  if (buriedByJobs) {
    it("a letter replayed between its job's death and its keep stays off the list: the keep only bounds the channel", async () => {
      const { store, bury, unkept } = await make();
      if (bury === undefined || unkept === undefined) throw new Error("the store's job queue writes no letter");
      const channel = freshChannel();
      const base = pastBase();
      const [early, letter] = [deadLetter(channel, base), deadLetter(channel, base + 1)];
      await bury(early);
      await bury(letter);
      // Another replica, or the CLI, replays the letter before this one's keep runs.
      expect(await store.replay({ ids: [idOf(letter)] })).toEqual([subjectOf(letter)]);

      expect(await unkept.keep(letter, 1)).toEqual(expect.objectContaining({ dropped: 0 }));
      expect(await store.one(idOf(letter))).toBeUndefined();
      expect(await listedIds(store, channel)).toEqual([idOf(early)]);
      expect(await store.replay({ ids: [idOf(letter)] })).toEqual([]);
    });
  }

  it("replays chosen letters: they leave the list and the count, unknown ids are skipped, and it answers exactly the letters it took", async () => {
    const { store } = await make();
    const [channel, other] = [freshChannel(), freshChannel()];
    const base = pastBase();
    const a0 = deadLetter(channel, base);
    const a1 = deadLetter(channel, base + 1);
    const a2 = deadLetter(channel, base + 2);
    const b0 = deadLetter(other, base + 3);
    for (const letter of [a0, a1, a2, b0]) await store.keep(letter, MANY);
    const counted = await store.count();

    expect(await store.replay({ ids: [idOf(a0), `unknown-${crypto.randomUUID()}`] })).toEqual([subjectOf(a0)]);
    expect(await store.one(idOf(a0))).toBeUndefined();
    expect(await listedIds(store, channel)).toEqual([a1, a2].map(idOf));
    expect(await store.count()).toBe(counted - 1);
    // Another channel's id is not the channel's.
    expect(await store.replay({ channel, ids: [idOf(b0)] })).toEqual([]);

    expect(byId(await store.replay({ channel }))).toEqual([a1, a2].map(subjectOf).sort(bySubjectId));
    expect(await listedIds(store, channel)).toEqual([]);
    expect(await store.count()).toBe(counted - 3);
    expect(await listedIds(store, other)).toEqual([idOf(b0)]);
    // Replayed already: nothing left to replay, and nothing answered.
    expect(await store.replay({ channel })).toEqual([]);
    expect(await store.replay({ ids: [idOf(a0)] })).toEqual([]);
  });

  it("a replay answers only the letters still listed when it took them: not one deleted or replayed before", async () => {
    const { store } = await make();
    const channel = freshChannel();
    const base = pastBase();
    const deleted = deadLetter(channel, base);
    const replayedFirst = deadLetter(channel, base + 1);
    const stays = deadLetter(channel, base + 2);
    // Large enough that a store keeping letters in pieces (the Durable Object) holds it so.
    const big = deadLetter(channel, base + 3, { text: "😀".repeat(300_000) });
    for (const letter of [deleted, replayedFirst, stays, big]) await store.keep(letter, MANY);

    expect(await store.remove(idOf(deleted))).toBe(true);
    expect(await store.replay({ ids: [idOf(replayedFirst)] })).toEqual([subjectOf(replayedFirst)]);
    expect(await store.replay({ channel, ids: [idOf(deleted), idOf(replayedFirst), idOf(stays)] })).toEqual([
      subjectOf(stays),
    ]);
    expect(await store.replay({ channel })).toEqual([subjectOf(big)]);
    expect(await listedIds(store, channel)).toEqual([]);
  });

  it("deletes one letter: it leaves the list and the count, and a second delete finds none", async () => {
    const { store } = await make();
    const channel = freshChannel();
    const base = pastBase();
    const [gone, stays] = [deadLetter(channel, base), deadLetter(channel, base + 1)];
    await store.keep(gone, MANY);
    await store.keep(stays, MANY);
    const counted = await store.count();

    expect(await store.remove(idOf(gone))).toBe(true);
    expect(await store.one(idOf(gone))).toBeUndefined();
    expect(await listedIds(store, channel)).toEqual([idOf(stays)]);
    expect(await store.count()).toBe(counted - 1);
    expect(await store.remove(idOf(gone))).toBe(false);
    expect(await store.remove(`unknown-${crypto.randomUUID()}`)).toBe(false);
  });
}
