/**
 * The statements of a message's path are named: each session plans them once and keeps a
 * generic plan. Such a plan, made while the tables were small, must still find its rows
 * through an index once they have grown, where it would otherwise scan them on every call.
 */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { jobsAfter, jobsById } from "../../../../src/node/replicas/lane-reads.js";
import { claimLanes } from "../../../../src/node/replicas/lane-statements.js";
import { MAX_NAMED_STATEMENTS, namedStatement } from "../../../../src/node/state/postgres/named-statements.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { migratePostgres } from "../../../../src/node/state/postgres/postgres-migrations.js";
import { createLogSink } from "../../../support/log-sink.js";
import { emptyDatabase, poolOn } from "./fresh-postgres.js";
import { claimTicket, jobIn, laneOf } from "./lane-tickets.js";

/** The sequential scans of each of the service's tables so far, as the statistics hold them. */
async function sequentialScans(pool: pg.Pool): Promise<Record<string, number>> {
  const rows = await pool.query<{ relname: string; seq_scan: string }>(
    "SELECT relname, seq_scan FROM pg_stat_user_tables WHERE schemaname = 'webhook_channel'",
  );
  return Object.fromEntries(rows.rows.map((row) => [row.relname, Number(row.seq_scan)]));
}

/** Index entries read so far from the service's tables, as the statistics hold them. */
async function indexReads(pool: pg.Pool): Promise<number> {
  const rows = await pool.query<{ reads: string }>(
    "SELECT coalesce(sum(idx_tup_read), 0) AS reads FROM pg_stat_user_indexes WHERE schemaname = 'webhook_channel'",
  );
  return Number(rows.rows[0]?.reads ?? 0);
}

describe("named statements", () => {
  it("keeps a generic plan of each statement of a message's path, and never scans the lanes or jobs tables", async () => {
    const url = await emptyDatabase();
    // One connection: every statement of the test runs in the session whose plans are read.
    const pool = poolOn(url, { max: 1 });
    const other = poolOn(url);
    await migratePostgres(pool);
    // The worst case: every statement on a generic plan, made on the first calls (Postgres
    // otherwise weighs the plans and may plan afresh, with the arrays at hand, at every call).
    await pool.query("SET plan_cache_mode = force_generic_plan");
    const store = createPostgresLaneStore(pool, "rplan", createLogSink().logger);
    // The migration's index builds count as scans: counted before.
    await pool.query("SELECT pg_stat_force_next_flush()");
    const before = await sequentialScans(other);

    // The life of a message, first on empty tables. A finish's delete rides on the next write.
    const finishes: Promise<void>[] = [];
    let turn = 0;
    const lifeOfAMessage = async (conversation: string): Promise<void> => {
      turn += 1;
      const fresh = jobIn(conversation);
      // Every other one with an Idempotency-Key: the add's statement then stores the key too.
      const job = turn % 2 === 0 ? { ...fresh, message: { ...fresh.message, idempotencyKey: `key-${turn}` } } : fresh;
      const ticket = await claimTicket(pool, "rplan", job);
      await store.add(job);
      await jobsAfter(pool, [{ conversation: laneOf(job), after: 0, limit: 10 }]);
      await jobsById(pool, [job.message.id]);
      await store.save(ticket, { ...job, attempts: 1 });
      // Answered: the reply's number and the conversation's turns are written with it.
      await store.save(
        ticket,
        { ...job, attempts: 1, delivered: 1 },
        { turns: [{ role: "user", text: "hi", at: turn }] },
      );
      finishes.push(Promise.resolve(store.finish(ticket, job)));
    };
    for (let round = 0; round < 3; round++) await lifeOfAMessage(`small-${round}`);

    // Grown by another session, with no ANALYZE (which would make the plans again): many
    // conversations, and a backlog.
    await other.query(
      `INSERT INTO webhook_channel.lanes (conversation, channel, owner, epoch, last_seq)
       SELECT 'webhook:grown-' || g, 'webhook', NULL, 1, 1 FROM generate_series(1, 50000) g`,
    );
    await other.query(
      `INSERT INTO webhook_channel.jobs (id, channel, conversation, job, stored_by)
       SELECT 'grown-' || g, 'webhook', 'webhook:grown-' || (g % 500), '{}', 'rgone' FROM generate_series(1, 20000) g`,
    );
    await pool.query("SELECT pg_stat_force_next_flush()");
    const readsBefore = await indexReads(other);
    for (let round = 0; round < 3; round++) await lifeOfAMessage(`large-${round}`);
    await Promise.all(finishes);

    const prepared = await pool.query<{ name: string; generic_plans: string }>(
      "SELECT name, generic_plans FROM pg_prepared_statements WHERE name LIKE 'wc%'",
    );

    // The claim, the grouped writes (adds, saves, finishes) and the two reads.
    expect(prepared.rows.length).toBeGreaterThanOrEqual(6);
    for (const row of prepared.rows) expect(Number(row.generic_plans), row.name).toBeGreaterThan(0);

    // Sends this session's counts to the statistics when the statement ends.
    await pool.query("SELECT pg_stat_force_next_flush()");
    expect(await sequentialScans(other)).toEqual(before);
    // Nor does a plan walk a whole index in their place (a merge join would): three messages
    // read a few entries each, where one pass over an index of the grown tables reads thousands.
    expect((await indexReads(other)) - readsBefore).toBeLessThan(1_000);
  });

  it("comes to one generic plan of each statement of a message's path, with Postgres left to choose", async () => {
    const url = await emptyDatabase();
    const pool = poolOn(url, { max: 1 });
    await migratePostgres(pool);
    const store = createPostgresLaneStore(pool, "rweigh", createLogSink().logger);
    // Groups and batches of every size: a plan made for one call's arrays would count their
    // rows exactly, look cheaper than the generic plan, and be made again at every call.
    const finishes: Promise<void>[] = [];
    for (let size = 1; size <= 12; size++) {
      const jobs = Array.from({ length: size }, (_, index) => jobIn(`weigh-${size}-${index}`));
      await Promise.all(jobs.map((job) => store.add(job)));
      const claims = await claimLanes(
        pool,
        "rweigh",
        true,
        jobs.map((job) => ({ conversation: laneOf(job), channel: "webhook", jobId: job.message.id, reclaim: true })),
      );
      await jobsAfter(
        pool,
        jobs.map((job) => ({ conversation: laneOf(job), after: 0, limit: 10 })),
      );
      await jobsById(
        pool,
        jobs.map((job) => job.message.id),
      );
      const held = jobs.map((job, index) => ({ job, ticket: { key: laneOf(job), epoch: claims[index]?.epoch ?? 0 } }));
      // Saves under tickets, alone in their group: the fence and the jobs' update; then answered,
      // with the conversation's turns; then finished, each delete riding on the next group.
      await Promise.all(held.map(({ job, ticket }) => store.save(ticket, { ...job, attempts: 1 })));
      await Promise.all(
        held.map(({ job, ticket }) =>
          store.save(
            ticket,
            { ...job, attempts: 1, delivered: 1 },
            { turns: [{ role: "user", text: "hi", at: size }] },
          ),
        ),
      );
      finishes.push(...held.map(({ job, ticket }) => Promise.resolve(store.finish(ticket, job))));
    }
    await Promise.all(finishes);
    const prepared = await pool.query<{ statement: string; generic_plans: string; custom_plans: string }>(
      "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'wc%'",
    );
    // The adds, the claims, the two reads, the saves and the finishes.
    expect(prepared.rows.length).toBeGreaterThanOrEqual(6);
    expect(prepared.rows.some((row) => row.statement.includes("INSERT INTO webhook_channel.lanes"))).toBe(true);
    for (const row of prepared.rows) {
      const shape = row.statement.replace(/\s+/g, " ").slice(0, 160);
      // Postgres weighs five custom plans against the generic one, then keeps the cheaper (a
      // shape run five times or fewer, as some mixes of parts are here, has had only those).
      expect(Number(row.custom_plans), shape).toBeLessThanOrEqual(5);
      if (Number(row.custom_plans) + Number(row.generic_plans) > 5) {
        expect(Number(row.generic_plans), shape).toBeGreaterThan(0);
      }
    }
  });

  it("names each text once, the same name each time, and sends texts past the bound unnamed", () => {
    const first = namedStatement("SELECT 1", []);
    expect(namedStatement("SELECT 1", [2])).toEqual({ name: first.name, text: "SELECT 1", values: [2] });
    expect(namedStatement("SELECT 2", []).name).not.toBe(first.name);
    // However many this file named before: as many new texts again are past the bound.
    for (let n = 3; n <= MAX_NAMED_STATEMENTS + 1; n++) namedStatement(`SELECT ${n}`, []);
    expect(namedStatement("SELECT 'one too many'", [])).toEqual({ text: "SELECT 'one too many'", values: [] });
    expect(namedStatement("SELECT 1", []).name).toBe(first.name);
  });
});
