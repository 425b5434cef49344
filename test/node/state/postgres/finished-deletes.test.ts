/**
 * A finished job's delete that the database refused is tried again until it commits, even once
 * the replica claimed the job's lane anew (its lease ran out in the outage that refused the
 * delete): behind the old ticket it would be fenced, the row would stay in `jobs`, counted in
 * the backlog, and the lane's next owner would run the job again. The refusal is the database's
 * own: a trigger raises while the test says so.
 */
import { describe, expect, it } from "vitest";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { waitFor } from "../../../support/wait-for.js";
import { migratedDatabase } from "./fresh-postgres.js";
import { claimTicket, jobIn, storedJob } from "./lane-tickets.js";

describe("a finished job's delete that failed", () => {
  it("is retried until it commits, though the replica claimed the lane again meanwhile", async () => {
    const { pool } = await migratedDatabase();
    await pool.query(`
      CREATE TABLE public.refuse_deletes (on_ boolean NOT NULL);
      INSERT INTO public.refuse_deletes VALUES (false);
      CREATE FUNCTION public.refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF (SELECT on_ FROM public.refuse_deletes) THEN RAISE EXCEPTION 'disk full (test)'; END IF;
          RETURN OLD;
        END $$;
      CREATE TRIGGER refuse_delete BEFORE DELETE ON webhook_channel.jobs FOR EACH ROW EXECUTE FUNCTION public.refuse_delete();
    `);
    const { logger, lines } = createLogSink("info");
    const store = createPostgresLaneStore(pool, "rsame", logger);
    const job = jobIn("finished-in-an-outage");
    await store.add(job);
    const first = await claimTicket(pool, "rsame", job);

    await pool.query("UPDATE public.refuse_deletes SET on_ = true");
    // Its waiter is told of the failure; the retry is what this test is about.
    await Promise.resolve(store.finish(first, job)).catch(() => undefined);
    await waitFor(
      () =>
        lines.some((line) => line.msg === "cannot remove finished messages from postgres; retrying") ? true : undefined,
      5_000,
      "the delete to fail",
    );
    // The same replica claims the lane again: its epoch rises past the one the delete was asked under.
    const second = await claimTicket(pool, "rsame", job);
    expect(second.epoch).toBeGreaterThan(first.epoch);
    await pool.query("UPDATE public.refuse_deletes SET on_ = false");

    await waitFor(
      async () => ((await storedJob(pool, job.message.id)) === undefined ? true : undefined),
      10_000,
      "the row deleted",
    );
    await store.flush();
  }, 30_000);
});
