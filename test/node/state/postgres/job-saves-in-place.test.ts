/** Saving a job's reply on Postgres rewrites the row on its own page, so no index grows for it. */
import type pg from "pg";
import { describe, expect, it } from "vitest";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase } from "./fresh-postgres.js";
import { claimTicket, jobIn, laneOf } from "./lane-tickets.js";

const JOBS = 300;
const CONVERSATIONS = 10;

/**
 * The heap page of each stored job, by id. A heap-only update keeps a row on its page; a save that
 * finds no room there moves the row to another, with a new entry in each index.
 */
async function pagesOfJobs(pool: pg.Pool): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ id: string; page: string }>(
    "SELECT id, split_part(trim(both '()' from ctid::text), ',', 1) AS page FROM webhook_channel.jobs",
  );
  return new Map(rows.map((row) => [row.id, row.page]));
}

describe("Postgres job saves", () => {
  it("save each stored job's reply on the job's own page, a heap-only update", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rsaves", createLogSink().logger);
    const text = "a message of a few words, as a form or a chat sends one. ".repeat(3);
    const jobs = Array.from({ length: JOBS }, (_, index) => jobIn(`conversation-${index % CONVERSATIONS}`, text));
    await Promise.all(jobs.map((job) => store.add(job)));
    const before = await pagesOfJobs(pool);
    const tickets = new Map<string, Awaited<ReturnType<typeof claimTicket>>>();
    for (const job of jobs.slice(0, CONVERSATIONS)) tickets.set(laneOf(job), await claimTicket(pool, "rsaves", job));
    const saved = (job: Job, index: number): Job => ({
      ...job,
      replies: [
        { id: crypto.randomUUID(), sequence: index + 1, body: JSON.stringify({ text, in_reply_to: job.message.id }) },
      ],
    });
    // One save at a time, as replies come: each its own statement, on pages the adds filled.
    for (const [index, job] of jobs.entries()) {
      const ticket = tickets.get(laneOf(job));
      if (ticket === undefined) throw new Error("no ticket");
      await store.save(ticket, saved(job, index));
    }
    const after = await pagesOfJobs(pool);
    expect(after.size).toBe(JOBS);
    const moved = jobs.filter((job) => after.get(job.message.id) !== before.get(job.message.id));
    expect(moved.length).toBe(0);
  });
});
