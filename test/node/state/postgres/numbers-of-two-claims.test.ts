/**
 * A group that carries saves of one lane under two of this replica's claims (a run that outlived
 * a claim beside the run under the newer one): the fence admits the newer claim alone, so the
 * lane's last reply number must be raised only by what the newer claim numbered. Raised by the
 * refused run's numbers, the lane skips them: the next reply's `sequence` leaves a gap.
 */
import { describe, expect, it } from "vitest";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { isLaneFenced } from "../../../../src/core/lifecycle/lane-store.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { migratedDatabase } from "./fresh-postgres.js";
import { claimTicket, jobIn, storedLastSequence } from "./lane-tickets.js";

const answered = (of: Job, count: number): Job => ({
  ...of,
  replies: Array.from({ length: count }, (_, index) => ({ id: crypto.randomUUID(), sequence: index + 1, body: "{}" })),
});

const turns = { turns: [] };

describe("reply numbers of one lane under two claims of one replica, in one group", () => {
  for (const order of ["older first", "newer first"] as const) {
    it(`raises the lane's last number by the newer claim's replies alone (${order})`, async () => {
      const { pool } = await migratedDatabase();
      const store = createPostgresLaneStore(pool, "rnumbers", createLogSink().logger);
      const job = jobIn(`numbers-${order.replace(" ", "-")}`);
      await store.add(job);
      const older = await claimTicket(pool, "rnumbers", job);
      const newer = await claimTicket(pool, "rnumbers", job);
      // The outliving run's brain answered two replies (1, 2); the newer run's answered one (1).
      const [oldRun, newRun] = [answered(job, 2), answered(job, 1)];
      const saves =
        order === "older first"
          ? [store.save(older, oldRun, turns), store.save(newer, newRun, turns)]
          : [store.save(newer, newRun, turns), store.save(older, oldRun, turns)].reverse();
      const [oldSaved, newSaved] = await Promise.allSettled(saves);
      expect(oldSaved?.status === "rejected" && isLaneFenced(oldSaved.reason)).toBe(true);
      expect(newSaved?.status).toBe("fulfilled");
      expect(await storedLastSequence(pool, older.key)).toBe(1);
      // The next reply of the lane follows the stored one: 2, not 3.
      expect(await store.lastSequence(newer)).toBe(1);
    });
  }
});
