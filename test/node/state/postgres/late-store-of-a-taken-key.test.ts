/**
 * A message whose storing statement commits late: its request was refused (503) while the
 * statement hung, its key's reservation was released, and the client's retry took the key for
 * a new message on another replica. The late statement must neither store the first message
 * beside the retry's (the reply would go out twice, out of order) nor take the key over.
 */
import type pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { IdempotencyRecord } from "../../../../src/core/idempotency/idempotency-store.js";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { createPostgresIdempotencyStore } from "../../../../src/node/state/postgres/postgres-idempotency-store.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase } from "./fresh-postgres.js";

let pool: pg.Pool;

beforeAll(async () => {
  ({ pool } = await migratedDatabase());
});

const CHANNEL = "webhook";

/** The job of `record`'s message, carrying `key`. */
function jobOf(record: IdempotencyRecord, key: string, receivedAt: number): Job {
  return {
    message: {
      id: record.messageId,
      channel: CHANNEL,
      receivedAt,
      idempotencyKey: key,
      idempotencyFingerprint: "f",
      message: { senderId: "u1", conversationId: record.conversationId, text: "order 17" },
    },
    delivered: 0,
    attempts: 0,
  };
}

async function storedIds(conversation: string): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    "SELECT id FROM webhook_channel.jobs WHERE conversation = $1 ORDER BY seq",
    [`${CHANNEL.length}:${CHANNEL}:${conversation}`],
  );
  return rows.map((row) => row.id);
}

describe("a late storing statement and an Idempotency-Key a retry took meanwhile", () => {
  it("leaves the late message out (409 to its request) and the key with the retry's message", async () => {
    const keys = createPostgresIdempotencyStore(pool);
    const late = createPostgresLaneStore(pool, "rlate", createLogSink().logger);
    const retried = createPostgresLaneStore(pool, "rretry", createLogSink().logger);
    const key = `key-${crypto.randomUUID()}`;
    const conversation = `c-${crypto.randomUUID()}`;
    const first = { messageId: crypto.randomUUID(), conversationId: conversation, fingerprint: "f" };
    const retry = { messageId: crypto.randomUUID(), conversationId: conversation, fingerprint: "f" };
    const now = Date.now();

    expect(await keys.reserve(CHANNEL, key, first, now)).toBeUndefined();
    // Its statement hung; the request was refused, and the refusal released the reservation.
    await keys.release(CHANNEL, key, first.messageId);
    expect(await keys.reserve(CHANNEL, key, retry, now + 1)).toBeUndefined();
    await retried.add(jobOf(retry, key, now + 1));
    await keys.commit(CHANNEL, key, retry.messageId, now + 2);

    // The hung statement commits now.
    await expect(late.add(jobOf(first, key, now))).rejects.toMatchObject({ code: "request_in_progress" });
    expect(await storedIds(conversation)).toEqual([retry.messageId]);
    expect(await keys.reserve(CHANNEL, key, first, now + 3)).toEqual({ record: retry, committed: true });
  });

  it("stores the late message under its key when no retry took the key", async () => {
    const keys = createPostgresIdempotencyStore(pool);
    const late = createPostgresLaneStore(pool, "rlate2", createLogSink().logger);
    const key = `key-${crypto.randomUUID()}`;
    const conversation = `c-${crypto.randomUUID()}`;
    const first = { messageId: crypto.randomUUID(), conversationId: conversation, fingerprint: "f" };
    const now = Date.now();

    expect(await keys.reserve(CHANNEL, key, first, now)).toBeUndefined();
    await keys.release(CHANNEL, key, first.messageId);
    await late.add(jobOf(first, key, now));
    expect(await storedIds(conversation)).toEqual([first.messageId]);
    // Its client's retry gets the message that was stored after all.
    expect(await keys.reserve(CHANNEL, key, { ...first, messageId: "another" }, now + 1)).toEqual({
      record: first,
      committed: true,
    });
  });
});
