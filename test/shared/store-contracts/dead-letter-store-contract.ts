/**
 * The behaviour every {@link DeadLetterStore} shares, as one suite run against each
 * implementation (memory and SQLite on Node, the Durable Object inside workerd), and through
 * the core's one pager (`createAdminDeadLetters`) over it. Runtime-neutral: no `node:` or
 * `cloudflare:` imports, so it runs on Node and inside workerd alike.
 *
 * A store may be shared with other tests (the Durable Object is one instance per isolate), so
 * each test keeps letters of channels of its own, counts relative to what was there, and looks
 * at its own letters only in a list of every channel. What a replay then does (memory: the
 * channel's queue; SQLite: a `jobs` row in state `replay`; the Durable Object: a hand-back to
 * the conversation's object) is each runtime's own and tested there; held here is what they
 * share: the letter leaves the list, and the replay answers exactly the letters it took.
 */
import { describe, expect, it } from "vitest";
import type { DeadLetterItem } from "../../../src/core/admin/dead-letter-item.js";
import { createAdminDeadLetters } from "../../../src/core/dead-letters/create-admin-dead-letters.js";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import type { DeadLetterStore } from "../../../src/core/dead-letters/dead-letter-store.js";
import {
  type DeadLetterStoreUnderTest,
  deadLetter,
  freshChannel,
  idOf,
  listedIds,
  MANY,
  pastBase,
} from "./dead-letter-contract-letters.js";
import { deadLetterRemovalCases } from "./dead-letter-removal-cases.js";

export {
  type DeadLetterStoreUnderTest,
  keptThroughCore,
  keptThroughCoreAsync,
} from "./dead-letter-contract-letters.js";

const WARNING = "dead letters over admin.max_dead_letters: the oldest were dropped";

/** Every page of `query` through the admin pager, following `next_cursor` to the end. */
async function allPages(
  store: DeadLetterStore,
  query: { channel?: string; limit: number },
): Promise<{ pages: DeadLetterItem[][]; ids: string[] }> {
  const admin = createAdminDeadLetters(store);
  const pages: DeadLetterItem[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await admin.list(cursor === undefined ? query : { ...query, cursor });
    pages.push([...page.items]);
    if (page.nextCursor === null) break;
    cursor = page.nextCursor;
  }
  return { pages, ids: pages.flat().map((item) => item.id) };
}

/**
 * Registers the contract's cases against the store `make` gives, one describe block per store.
 * `buriedByJobs` for a store whose job queue writes each letter as the job dies (its `bury`).
 */
export function deadLetterStoreContract(
  name: string,
  make: () => Promise<DeadLetterStoreUnderTest> | DeadLetterStoreUnderTest,
  options: { buriedByJobs?: boolean } = {},
): void {
  describe(`DeadLetterStore contract: ${name}`, () => {
    it("lists a channel's letters oldest first, by failure time and then by id", async () => {
      const { store } = await make();
      const channel = freshChannel();
      const base = pastBase();
      const prefix = crypto.randomUUID();
      const late = deadLetter(channel, base + 2);
      const early = deadLetter(channel, base);
      const tieB = deadLetter(channel, base + 1, { id: `${prefix}-b` });
      const tieA = deadLetter(channel, base + 1, { id: `${prefix}-a` });
      for (const letter of [late, tieB, early, tieA]) await store.keep(letter, MANY);

      const page = await store.page({ channel, after: null, limit: 10 });
      expect(page.letters.map((stored) => stored.id)).toEqual([early, tieA, tieB, late].map(idOf));
      expect(page.more).toBe(false);
      const after = await store.page({ channel, after: { diedAt: base + 1, id: idOf(tieA) }, limit: 10 });
      expect(after.letters.map((stored) => stored.id)).toEqual([tieB, late].map(idOf));
    });

    it("replays through the admin only letters of configured channels: the others stay listed, and naming only them is a 409", async () => {
      const { store } = await make();
      const [kept, gone] = [freshChannel(), freshChannel()];
      const base = pastBase();
      const [first, second, orphan] = [deadLetter(kept, base), deadLetter(kept, base + 1), deadLetter(gone, base)];
      for (const letter of [first, orphan]) await store.keep(letter, MANY);
      const admin = createAdminDeadLetters(store, undefined, [kept]);

      await expect(admin.replay({ ids: [idOf(orphan)] })).rejects.toMatchObject({
        code: "channel_not_configured",
        status: 409,
      });
      await expect(admin.replay({ channel: gone })).rejects.toMatchObject({ code: "channel_not_configured" });
      expect(await admin.replay({ ids: [idOf(first), idOf(orphan)] })).toBe(1);
      await store.keep(second, MANY);
      expect(await admin.replay({})).toBe(1);
      expect(await store.one(idOf(first))).toBeUndefined();
      expect(await store.one(idOf(second))).toBeUndefined();
      expect((await store.one(idOf(orphan)))?.channel).toBe(gone);
    });

    it("gives a kept letter back whole, and nothing for an unknown id", async () => {
      const { store } = await make();
      const channel = freshChannel();
      const plain = deadLetter(channel, pastBase());
      const letter: DeadLetter = {
        ...plain,
        job: {
          ...plain.job,
          message: {
            ...plain.job.message,
            idempotencyKey: `key-${crypto.randomUUID()}`,
            message: { ...plain.job.message.message, senderName: "Ada", text: "hé 😀" },
          },
          replies: [
            { id: crypto.randomUUID(), sequence: 1, body: '{"text":"first"}' },
            { id: crypto.randomUUID(), sequence: 2, body: '{"text":"second"}' },
          ],
          delivered: 1,
        },
      };
      await store.keep(letter, MANY);
      expect(await store.one(idOf(letter))).toEqual({ id: idOf(letter), channel, letter });
      expect(await store.one(`unknown-${crypto.randomUUID()}`)).toBeUndefined();
    });

    it("pages with the cursor: every letter once and none skipped, a letter added between pages shown when it sorts after the cursor", async () => {
      const { store } = await make();
      const channel = freshChannel();
      const base = pastBase();
      const letters = [0, 1, 2, 3, 4].map((offset) => deadLetter(channel, base + offset));
      for (const letter of letters) await store.keep(letter, MANY);
      const admin = createAdminDeadLetters(store);

      const first = await admin.list({ channel, limit: 2 });
      expect(first.items.map((item) => item.id)).toEqual(letters.slice(0, 2).map(idOf));
      expect(first.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      // Added between pages: one behind the cursor is shown on a later page, one before it never.
      const behind = deadLetter(channel, base + 10);
      const before = deadLetter(channel, base - 10);
      await store.keep(behind, MANY);
      await store.keep(before, MANY);

      const seen = first.items.map((item) => item.id);
      let cursor = first.nextCursor;
      let pages = 1;
      while (cursor !== null) {
        const page = await admin.list({ channel, limit: 2, cursor });
        seen.push(...page.items.map((item) => item.id));
        cursor = page.nextCursor;
        pages += 1;
      }
      expect(seen).toEqual([...letters, behind].map(idOf));
      // The last page held exactly the last two: no empty page after it.
      expect(pages).toBe(3);
      expect((await admin.list({ channel, limit: 10 })).nextCursor).toBeNull();
    });

    it("filters by channel, and lists every channel's letters in one order without one", async () => {
      const { store } = await make();
      const [a, b] = [freshChannel(), freshChannel()];
      const base = pastBase();
      const a0 = deadLetter(a, base);
      const b0 = deadLetter(b, base + 1);
      const a1 = deadLetter(a, base + 2);
      const b1 = deadLetter(b, base + 3);
      const letters = [a0, b0, a1, b1];
      for (const letter of letters) await store.keep(letter, MANY);

      expect(await listedIds(store, a)).toEqual([a0, a1].map(idOf));
      expect((await allPages(store, { channel: b, limit: 1 })).ids).toEqual([b0, b1].map(idOf));
      const mine = new Set(letters.map(idOf));
      const everyChannel = (await allPages(store, { limit: 500 })).ids.filter((id) => mine.has(id));
      expect(everyChannel).toEqual(letters.map(idOf));
    });

    it("keeps at most `max` letters per channel, dropping the oldest, and counts what it dropped", async () => {
      const { store } = await make();
      const [channel, other] = [freshChannel(), freshChannel()];
      const base = pastBase();
      const counted = await store.count();
      const l0 = deadLetter(channel, base);
      const l1 = deadLetter(channel, base + 1);
      const l2 = deadLetter(channel, base + 2);
      const l3 = deadLetter(channel, base + 3);
      const l4 = deadLetter(channel, base + 4);
      const elsewhere = deadLetter(other, base - 1);

      expect((await store.keep(elsewhere, 2)).dropped).toBe(0);
      expect((await store.keep(l0, 2)).dropped).toBe(0);
      expect((await store.keep(l1, 2)).dropped).toBe(0);
      const first = await store.keep(l2, 2);
      expect(first.dropped).toBe(1);
      expect(first.droppedTotal).toBeGreaterThanOrEqual(1);
      expect(await listedIds(store, channel)).toEqual([l1, l2].map(idOf));

      expect(await store.keep(l3, 2)).toEqual({ dropped: 1, droppedTotal: first.droppedTotal + 1 });
      // A letter older than every kept one is itself the oldest, so it goes at once.
      expect(await store.keep(deadLetter(channel, base - 5), 2)).toEqual({
        dropped: 1,
        droppedTotal: first.droppedTotal + 2,
      });
      expect(await listedIds(store, channel)).toEqual([l2, l3].map(idOf));
      // A lower bound takes effect at the next letter.
      expect(await store.keep(l4, 1)).toEqual({ dropped: 2, droppedTotal: first.droppedTotal + 4 });
      expect(await listedIds(store, channel)).toEqual([idOf(l4)]);
      expect(await listedIds(store, other)).toEqual([idOf(elsewhere)]);
      expect(await store.count()).toBe(counted + 2);
    });

    it("logs one warning for a keep that dropped letters, with the channel, the bound and the counts", async () => {
      const { keepLogged } = await make();
      const channel = freshChannel();
      const base = pastBase();
      const warnings = (lines: readonly Record<string, unknown>[]) => lines.filter((line) => line.msg === WARNING);
      const kept = deadLetter(channel, base);
      expect(warnings(await keepLogged(kept, 2))).toEqual([]);
      expect(warnings(await keepLogged(deadLetter(channel, base + 1), 2))).toEqual([]);
      // A copy of a kept letter drops nothing, so it warns of nothing.
      expect(warnings(await keepLogged(kept, 2))).toEqual([]);

      const over = warnings(await keepLogged(deadLetter(channel, base + 2), 2));
      expect(over).toEqual([
        expect.objectContaining({
          level: "warn",
          channel,
          max_dead_letters: 2,
          dropped: 1,
          dropped_total: expect.any(Number),
        }),
      ]);
    });

    it("a copy of a kept letter changes nothing; a later death of the same message replaces it", async () => {
      const { store } = await make();
      const channel = freshChannel();
      const base = pastBase();
      const letter = deadLetter(channel, base + 1, { error: "first death" });
      const later = deadLetter(channel, base + 2);
      await store.keep(letter, MANY);
      await store.keep(later, MANY);
      const counted = await store.count();

      // Delivered again by an at-least-once queue: same message, same failure time.
      const copy: DeadLetter = { ...letter, error: { ...letter.error, message: "a copy" } };
      expect((await store.keep(copy, MANY)).dropped).toBe(0);
      expect(await store.keep({ ...letter, diedAt: base, error: { ...letter.error, message: "older" } }, MANY)).toEqual(
        expect.objectContaining({ dropped: 0 }),
      );
      expect(await store.one(idOf(letter))).toEqual({ id: idOf(letter), channel, letter });
      expect(await store.count()).toBe(counted);

      // Replayed and failed again: the new letter replaces the old one, and moves in the list.
      const again: DeadLetter = { ...letter, diedAt: base + 3, error: { ...letter.error, message: "died again" } };
      await store.keep(again, MANY);
      expect(await store.one(idOf(letter))).toEqual({ id: idOf(letter), channel, letter: again });
      expect(await listedIds(store, channel)).toEqual([later, again].map(idOf));
      expect(await store.count()).toBe(counted);
    });

    deadLetterRemovalCases(make, options.buriedByJobs === true);
  });
}
