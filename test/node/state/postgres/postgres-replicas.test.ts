/**
 * What the Postgres stores share across replicas: two pools on one database stand for two
 * replicas (each with its own stores, as each process has).
 */
import { describe, expect, it } from "vitest";
import type { AuthFailureLimit } from "../../../../src/core/auth-limit/auth-failure-limiter.js";
import type { DeadLetter } from "../../../../src/core/dead-letters/dead-letter.js";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { jobsAfter } from "../../../../src/node/replicas/lane-reads.js";
import { createPostgresAuthFailureLimiter } from "../../../../src/node/state/postgres/postgres-auth-failure-limiter.js";
import { createPostgresDeadLetterStore } from "../../../../src/node/state/postgres/postgres-dead-letter-store.js";
import { createPostgresIdempotencyStore } from "../../../../src/node/state/postgres/postgres-idempotency-store.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase, poolOn } from "./fresh-postgres.js";
import { buryLetter, claimTicket, storedJob } from "./lane-tickets.js";

/** Two "replicas": two pools on one migrated database. */
async function twoReplicas() {
  const { url, pool } = await migratedDatabase();
  return { first: pool, second: poolOn(url) };
}

function job(channel: string, conversationId = `conversation-${crypto.randomUUID()}`): Job {
  return {
    message: {
      id: crypto.randomUUID(),
      channel,
      receivedAt: Date.now(),
      message: { senderId: "u1", conversationId, text: "hello" },
    },
    delivered: 0,
    attempts: 0,
  };
}

function letterOf(dead: Job, diedAt: number): DeadLetter {
  return { job: dead, error: { code: "upstream_rejected", message: "400", retryable: false }, attempts: 1, diedAt };
}

describe("Postgres stores across replicas", () => {
  it("an Idempotency-Key reserved on two replicas at once has one winner; the other sees it pending", async () => {
    const { first, second } = await twoReplicas();
    const stores = [createPostgresIdempotencyStore(first), createPostgresIdempotencyStore(second)];
    const now = Date.now();
    for (let round = 0; round < 20; round += 1) {
      const key = `key-${crypto.randomUUID()}`;
      const records = [0, 1, 2, 3].map(() => ({ messageId: crypto.randomUUID(), conversationId: "c1" }));
      const answers = await Promise.all(
        records.map((record, index) => stores[index % 2]?.reserve("webhook", key, record, now)),
      );
      const winners = records.filter((_, index) => answers[index] === undefined);
      expect(winners).toHaveLength(1);
      for (const answer of answers)
        if (answer !== undefined) expect(answer).toEqual({ record: winners[0], committed: false });
    }
  });

  it("a key committed with its message on one replica answers a retry sent to the other", async () => {
    const { first, second } = await twoReplicas();
    const now = Date.now();
    const accepted = job("webhook");
    const keyed: Job = { ...accepted, message: { ...accepted.message, idempotencyKey: "retry-me", receivedAt: now } };
    const record = { messageId: keyed.message.id, conversationId: keyed.message.message.conversationId };
    expect(await createPostgresIdempotencyStore(first).reserve("webhook", "retry-me", record, now)).toBeUndefined();
    await createPostgresLaneStore(first, "rkeys", createLogSink().logger).add(keyed);
    const retried = await createPostgresIdempotencyStore(second).reserve(
      "webhook",
      "retry-me",
      { messageId: crypto.randomUUID(), conversationId: "other" },
      now + 1_000,
    );
    expect(retried).toEqual({ record, committed: true });
  });

  it("counts failed authentications once across replicas", async () => {
    const { first, second } = await twoReplicas();
    let now = 1_000_000;
    const clock = { now: () => now };
    const limiters = [createPostgresAuthFailureLimiter(first, clock), createPostgresAuthFailureLimiter(second, clock)];
    const limit: AuthFailureLimit = { max: 4, windowMs: 60_000 };
    for (let failure = 0; failure < 4; failure += 1) {
      expect(await limiters[failure % 2]?.check("webhook", "203.0.113.7", limit)).toBeUndefined();
      await limiters[failure % 2]?.recordFailure("webhook", "203.0.113.7", limit);
      now += 1_000;
    }
    // Four failures, two on each replica: both refuse now, and only one of them logs it.
    const blocks = await Promise.all(limiters.map((limiter) => limiter.check("webhook", "203.0.113.7", limit)));
    expect(blocks.map((block) => block?.retryAfterSeconds)).toEqual([56, 56]);
    expect(blocks.filter((block) => block?.first === true)).toHaveLength(1);
    // Another address, and the same address on another channel, are not refused.
    expect(await limiters[0]?.check("webhook", "203.0.113.8", limit)).toBeUndefined();
    expect(await limiters[1]?.check("other", "203.0.113.7", limit)).toBeUndefined();
    // The oldest failure leaves the window: one more try.
    now = 1_000_000 + 60_000;
    expect(await limiters[1]?.check("webhook", "203.0.113.7", limit)).toBeUndefined();
  });

  it("asks the database nothing while no replica counts a failure", async () => {
    const { first, second } = await twoReplicas();
    let now = Date.now();
    const clock = { now: () => now };
    const quiet = createPostgresAuthFailureLimiter(first, clock);
    const limit: AuthFailureLimit = { max: 1, windowMs: 10_000 };
    await quiet.refresh();
    expect(quiet.check("webhook", "198.51.100.1", limit)).toBeUndefined();
    // Another replica counts one: this one learns of it at its next refresh.
    await createPostgresAuthFailureLimiter(second, clock).recordFailure("webhook", "198.51.100.1", limit);
    await quiet.refresh();
    expect(await quiet.check("webhook", "198.51.100.1", limit)).toEqual({ retryAfterSeconds: 10, first: true });
    // Once the window is over and pruned, checks are free again.
    now += 10_000;
    expect(await quiet.prune(now)).toBe(1);
    await quiet.refresh();
    expect(quiet.check("webhook", "198.51.100.1", limit)).toBeUndefined();
  });

  it("replicas taking replayed dead letters at once each take different ones, all of them, within each channel's room", async () => {
    const { first, second } = await twoReplicas();
    const channel = `channel-${crypto.randomUUID()}`;
    const letters = Array.from({ length: 40 }, (_, index) => letterOf(job(channel), 1_000 + index));
    const dead = createPostgresDeadLetterStore(first);
    for (const letter of letters) await buryLetter(first, "r-buried", letter);
    expect(await dead.replay({ channel })).toHaveLength(40);

    const stores = [first, second].map((pool, index) =>
      createPostgresLaneStore(pool, `r${index}`, createLogSink().logger),
    );
    const taken = await Promise.all(stores.map((store) => store.takeReplayed(() => 15)));
    const rest = await stores[0]?.takeReplayed(() => Number.POSITIVE_INFINITY);
    const ids = [...taken.flat(), ...(rest ?? [])].map((replayed) => replayed.message.id);
    for (const batch of taken) expect(batch.length).toBeLessThanOrEqual(15);
    expect(new Set(ids).size).toBe(40);
    expect(new Set(ids)).toEqual(new Set(letters.map((letter) => letter.job.message.id)));
    // Taken: they are pending jobs of their lane now, and nothing is left to take.
    expect(await stores[1]?.takeReplayed(() => Number.POSITIVE_INFINITY)).toEqual([]);
    const someLetter = letters[0];
    if (someLetter === undefined) throw new Error("no letter");
    const key = `${channel.length}:${channel}:${someLetter.job.message.message.conversationId}`;
    const [lane] = await jobsAfter(second, [{ conversation: key, after: 0, limit: 100 }]);
    expect(lane?.map((stored) => stored.job.message.id)).toEqual([someLetter.job.message.id]);
  });

  it("replicas replaying the same letters at once each answer only the letters they took: all of them, none twice", async () => {
    const { first, second } = await twoReplicas();
    const channel = `channel-${crypto.randomUUID()}`;
    const letters = Array.from({ length: 30 }, (_, index) => letterOf(job(channel), 1_000 + index));
    const [one, other] = [first, second].map((pool) => createPostgresDeadLetterStore(pool));
    if (one === undefined || other === undefined) throw new Error("no stores");
    for (const letter of letters) await buryLetter(first, "r-buried", letter);
    const ids = letters.map((letter) => letter.job.message.id);
    const answers = await Promise.all([
      one.replay({ channel }),
      other.replay({ ids: ids.slice(10) }),
      other.replay({ channel, ids: ids.slice(0, 20) }),
    ]);
    const taken = answers.flat().map((letter) => letter.id);
    expect(taken.toSorted()).toEqual(ids.toSorted());
  });

  it("a dead letter buried on one replica is listed and replayed by the other", async () => {
    const { first, second } = await twoReplicas();
    const jobs = createPostgresLaneStore(first, "rburies", createLogSink().logger);
    const channel = `channel-${crypto.randomUUID()}`;
    const dying = job(channel);
    await jobs.add(dying);
    await jobs.bury(await claimTicket(first, "rburies", dying), letterOf(dying, Date.now()));
    const elsewhere = createPostgresDeadLetterStore(second);
    expect((await elsewhere.one(dying.message.id))?.letter.job).toEqual(dying);
    expect(await storedJob(second, dying.message.id)).toBeUndefined();
    expect(await elsewhere.replay({ ids: [dying.message.id] })).toHaveLength(1);
    const [replayed] = await jobs.takeReplayed(() => Number.POSITIVE_INFINITY);
    expect(replayed?.message.id).toBe(dying.message.id);
  });
});
