import { runInDurableObject } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DeadLetter } from "../../src/core/dead-letters/dead-letter.js";
import type { Job } from "../../src/core/lifecycle/job.js";
import { AnsweredIds } from "../../src/workers/conversation/answered-ids.js";
import { ConversationLane } from "../../src/workers/conversation/conversation-lane.js";
import type { ConversationObject } from "../../src/workers/conversation/conversation-object.js";
import { ParkedJobs } from "../../src/workers/conversation/parked-jobs.js";
import { DEAD_LETTER_STORE_NAME } from "../../src/workers/dead-letters/dead-letter-object.js";
import { MeteredSql } from "../../src/workers/metered-sql.js";
import { piecesOf } from "../../src/workers/sqlite-pieces.js";
import { conversation, forgetConversations, objectsUse } from "./support/conversations.js";
import { captureLogs } from "./support/fake-receiver.js";
import { queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

const store = () => poolEnv.DEAD_LETTER_STORE.get(poolEnv.DEAD_LETTER_STORE.idFromName(DEAD_LETTER_STORE_NAME));

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

/** A dead letter of its own channel (the store is one object for every test of this isolate). */
function letter(fields: { diedAt?: number; text?: string; replies?: boolean } = {}): DeadLetter {
  const message = queuedMessage({
    conversationId: freshConversation(),
    channel: `store-${crypto.randomUUID()}`,
    text: fields.text ?? "hello",
  });
  const job: Job = {
    message,
    delivered: 0,
    attempts: 2,
    ...(fields.replies === true ? { replies: [{ id: crypto.randomUUID(), sequence: 1, body: '{"text":"hi"}' }] } : {}),
  };
  return {
    job,
    error: { code: "delivery_failed", message: "the receiver answered 400", retryable: false, status: 400 },
    attempts: 1,
    diedAt: fields.diedAt ?? Date.now(),
  };
}

/**
 * Makes the store's hand-backs fail, as when the conversations' objects cannot be reached, so
 * that a replay stays under way (and never runs a job of a channel no configuration has).
 */
function conversationsUnreachable(): void {
  const unreachable = {
    idFromName: (name: string) => poolEnv.CONVERSATIONS.idFromName(name),
    get: () => ({ replay: () => Promise.reject(new Error("object unreachable")) }),
  } as unknown as DurableObjectNamespace<ConversationObject>;
  objectsUse({ ...testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }), CONVERSATIONS: unreachable });
}

/** Drops letters from the store whatever their state, so that no hand-back outlives its test. */
const drop = (...ids: string[]) =>
  runInDurableObject(store(), (_instance, state) => {
    for (const id of ids) state.storage.sql.exec("DELETE FROM dead_letters WHERE id = ?", id);
  });

/** Runs the store's alarm by hand, as if its replay time had come. */
const runStoreAlarm = () =>
  runInDurableObject(store(), async (instance, state) => {
    state.storage.sql.exec("UPDATE dead_letters SET replay_at = 0 WHERE replay_at IS NOT NULL");
    await instance.alarm();
  });

/**
 * Hands a job back to a conversation's lane as its object's `replay` does, without the alarm
 * that would then run it (these tests look at the lane, not at the run).
 */
const restore = (stub: DurableObjectStub<ConversationObject>, job: Job, markedAt: number) =>
  runInDurableObject(stub, (_instance, state) => {
    const sql = new MeteredSql(state.storage.sql);
    return new ConversationLane(sql, new ParkedJobs(sql), new AnsweredIds(sql)).restore(job, Date.now(), markedAt);
  });

/** The lane of a conversation object in the order it runs its jobs. */
const laneOrder = (stub: DurableObjectStub<ConversationObject>) =>
  runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ id: string }>(
        `SELECT lane.id AS id FROM lane LEFT JOIN answered AS progress ON progress.id = lane.id
          ORDER BY (lane.started = 1 OR progress.job IS NOT NULL) DESC, lane.received_at, lane.arrival`,
      )
      .toArray()
      .map((row) => row.id),
  );

describe("the dead-letter store inside workerd", () => {
  it("ignores a copy of a letter the queue delivers again: a replay stays under way, and a replayed or deleted letter is not listed again", async () => {
    captureLogs();
    conversationsUnreachable();
    const replayed = letter();
    const id = replayed.job.message.id;
    await store().keep(replayed);
    expect(await store().replay({ ids: [id] })).toHaveLength(1);
    await store().keep(replayed);
    expect(await store().one(id)).toBeNull();

    const deleted = letter();
    await store().keep(deleted);
    expect(await store().remove(deleted.job.message.id)).toBe(true);
    await store().keep(deleted);
    expect(await store().one(deleted.job.message.id)).toBeNull();

    // The same message dying again later (a replay that failed) is a new letter.
    await store().keep({ ...deleted, diedAt: deleted.diedAt + 1 });
    expect((await store().one(deleted.job.message.id))?.diedAt).toBe(deleted.diedAt + 1);
    await drop(deleted.job.message.id, id);
  });

  it("never cuts a surrogate pair between two stored pieces", async () => {
    for (const prefix of ["", "a"]) {
      const json = `${prefix}${"😀".repeat(300_000)}`;
      const pieces = piecesOf(json);
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.join("")).toBe(json);
      const highSurrogateAtEnd = (piece: string) => /[\uD800-\uDBFF]$/.test(piece);
      expect(pieces.filter(highSurrogateAtEnd)).toEqual([]);
    }
    for (const text of ["😀".repeat(400_000), `a${"😀".repeat(400_000)}`]) {
      const big = letter({ text });
      await store().keep(big);
      const kept = await store().one(big.job.message.id);
      expect(kept === null ? undefined : (JSON.parse(kept.letter) as DeadLetter).job.message.message.text).toBe(text);
      await store().remove(big.job.message.id);
    }
  });

  it("lists a replay again, with an error line, when its conversation cannot take it after ten tries", async () => {
    const { lines } = captureLogs();
    conversationsUnreachable();
    const stuck = letter();
    const id = stuck.job.message.id;
    await store().keep(stuck);
    await store().replay({ ids: [id] });
    for (let run = 0; run < 12 && (await store().one(id)) === null; run += 1) await runStoreAlarm();

    expect(await store().one(id)).not.toBeNull();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: "a replayed dead letter could not be handed back to its conversation; it is listed again",
        message_id: id,
        tries: 10,
      }),
    );
    await drop(id);
  });

  it("takes a replay once even when its hand-back is repeated after it ran", async () => {
    captureLogs();
    const dead = letter({ replies: true });
    const stub = conversation(dead.job.message.message.conversationId, dead.job.message.channel);
    const markedAt = Date.now();
    expect(await restore(stub, dead.job, markedAt)).toBe("queued");
    // It ran and was answered (or died again) after the replay was asked for.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("DELETE FROM lane");
      state.storage.sql.exec("INSERT INTO answered (id, at) VALUES (?, ?)", dead.job.message.id, markedAt + 5);
    });
    expect(await restore(stub, dead.job, markedAt)).toBe("duplicate");
    // A replay asked for later runs it again.
    expect(await restore(stub, dead.job, markedAt + 10)).toBe("queued");
  });

  it("puts a replayed job at the end of its lane, behind a started job and those waiting, as if accepted now", async () => {
    captureLogs();
    const conversationId = freshConversation();
    const channel = `store-${crypto.randomUUID()}`;
    const stub = conversation(conversationId, channel);
    const now = Date.now();
    // A started job waiting for its retry, and a later one waiting behind it.
    await runInDurableObject(stub, (_instance, state) => {
      const insert = (id: string, receivedAt: number, started: number) =>
        state.storage.sql.exec(
          "INSERT INTO lane (id, received_at, arrival, started, next_at, job) VALUES (?, ?, (SELECT COALESCE(MAX(arrival), 0) + 1 FROM lane), ?, ?, '{}')",
          id,
          receivedAt,
          started,
          now + 3_600_000,
        );
      insert("started", now - 1_000, 1);
      insert("waiting", now - 500, 0);
    });
    const older = letter({ replies: true });
    const job: Job = {
      ...older.job,
      message: { ...older.job.message, channel, receivedAt: now - 60_000, message: { senderId: "u1", conversationId } },
    };
    expect(await restore(stub, job, now)).toBe("queued");
    expect(await laneOrder(stub)).toEqual(["started", "waiting", job.message.id]);
  });
});
