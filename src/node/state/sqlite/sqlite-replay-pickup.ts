import type { Job } from "../../../core/lifecycle/job.js";
import type { SqliteEpoch } from "./sqlite-epoch.js";
import type { StateDb } from "./sqlite-state.js";

/** Replayed dead letters stored in `jobs` (state `replay`), handed to their channels' queues as room frees up. */
export interface SqliteReplayPickup {
  /** Takes the replays each channel has room for (`room`), oldest first, as pending jobs. */
  take(room: (channel: string) => number): readonly Job[];
}

/** The {@link SqliteReplayPickup} of the file, which takes nothing once `epoch` is another process's. */
export function createSqliteReplayPickup(db: StateDb, epoch: SqliteEpoch): SqliteReplayPickup {
  const anyReplay = db.prepare("SELECT 1 FROM jobs WHERE state = 'replay' LIMIT 1");
  // The channel without parsing each job: the pickup looks at waiting replays every second.
  const selectReplay = db.prepare(
    "SELECT id, json_extract(job, '$.message.channel') AS channel FROM jobs WHERE state = 'replay' ORDER BY seq",
  );
  // A replay taken is stored anew, at the end: a restart resumes stored jobs in `seq` order,
  // and the job now joins the end of its lane, behind what was accepted before it was taken.
  const takeReplay = db.prepare("DELETE FROM jobs WHERE id = ? AND state = 'replay' RETURNING job");
  const storeTaken = db.prepare("INSERT INTO jobs (id, job, state) VALUES (?, ?, 'pending')");
  const takeReplays = db.transaction((room: (channel: string) => number): Job[] => {
    // A process that no longer holds the file takes nothing: its lanes run nothing more.
    epoch.check();
    const left = new Map<string, number>();
    const taken: Job[] = [];
    for (const row of selectReplay.all() as { id: string; channel: string }[]) {
      const free = left.get(row.channel) ?? room(row.channel);
      left.set(row.channel, Math.max(0, free - 1));
      if (free < 1) continue;
      const job = takeReplay.get(row.id) as { job: string } | undefined;
      if (job === undefined) continue;
      storeTaken.run(row.id, job.job);
      taken.push(JSON.parse(job.job) as Job);
    }
    return taken;
  });
  return {
    take(room) {
      // Most polls find nothing: they take no write lock then.
      if (anyReplay.get() === undefined) return [];
      // IMMEDIATE: the write lock first, so that a commit of another connection (the delivery
      // thread, the CLI) between the read and the update cannot fail the poll; a replay
      // committed after the read is taken by the next poll.
      return takeReplays.immediate(room);
    },
  };
}
