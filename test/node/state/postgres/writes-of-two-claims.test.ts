/**
 * Two runs of one job in one replica, under two of its claims (a run that outlived a claim of
 * its conversation, and the run of the copy read again after it), whose writes meet in one
 * group: only the newer claim's write is made, and only its run is told so. Merged, both runs
 * were told their replies were stored, and both posted them under their own webhook-ids.
 */
import { describe, expect, it } from "vitest";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { isLaneFenced } from "../../../../src/core/lifecycle/lane-store.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase } from "./fresh-postgres.js";
import { claimTicket, jobIn, storedJob } from "./lane-tickets.js";

const answered = (of: Job): Job => ({
  ...of,
  replies: [{ id: crypto.randomUUID(), sequence: 1, body: "{}" }],
});

/** A brain given no history (echo) keeps no turns: the save is the job's update alone. */
const turns = { turns: [] };

const fenced = (result: PromiseSettledResult<void> | undefined): boolean =>
  result?.status === "rejected" && isLaneFenced(result.reason);

describe("writes of one job under two claims of one replica, in one group", () => {
  for (const order of ["older first", "newer first"] as const) {
    it(`makes the newer claim's save and refuses the older one's (${order})`, async () => {
      const { pool } = await migratedDatabase();
      const store = createPostgresLaneStore(pool, "rtwice", createLogSink().logger);
      const job = jobIn(`twice-${order.replace(" ", "-")}`);
      await store.add(job);
      const older = await claimTicket(pool, "rtwice", job);
      const newer = await claimTicket(pool, "rtwice", job);
      const [oldRun, newRun] = [answered(job), answered(job)];
      const saves =
        order === "older first"
          ? [store.save(older, oldRun, turns), store.save(newer, newRun, turns)]
          : [store.save(newer, newRun, turns), store.save(older, oldRun, turns)].reverse();
      const [oldSaved, newSaved] = await Promise.allSettled(saves);
      expect(fenced(oldSaved)).toBe(true);
      expect(newSaved?.status).toBe("fulfilled");
      expect((await storedJob(pool, job.message.id))?.replies?.[0]?.id).toBe(newRun.replies?.[0]?.id);
    });
  }

  it("refuses an older claim's finish beside a newer claim's save, and keeps the job", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rfinish", createLogSink().logger);
    const job = jobIn("finish-beside-save");
    await store.add(job);
    const older = await claimTicket(pool, "rfinish", job);
    const newer = await claimTicket(pool, "rfinish", job);
    const newRun = answered(job);
    const [finished, saved] = await Promise.allSettled([store.finish(older, job), store.save(newer, newRun, turns)]);
    expect(fenced(finished)).toBe(true);
    expect(saved.status).toBe("fulfilled");
    expect((await storedJob(pool, job.message.id))?.replies?.[0]?.id).toBe(newRun.replies?.[0]?.id);
  });

  it("refuses an older claim's save after a newer claim's finish, and deletes the job", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rlate", createLogSink().logger);
    const job = jobIn("save-after-finish");
    await store.add(job);
    const older = await claimTicket(pool, "rlate", job);
    const newer = await claimTicket(pool, "rlate", job);
    const [finished, saved] = await Promise.allSettled([
      store.finish(newer, job),
      store.save(older, answered(job), turns),
    ]);
    expect(finished.status).toBe("fulfilled");
    expect(fenced(saved)).toBe(true);
    expect(await storedJob(pool, job.message.id)).toBeUndefined();
  });
});
