import { type Job, newJob } from "../../core/lifecycle/job.js";
import type { MeteredSql } from "../metered-sql.js";
import { bodyRef, type InboundBody, readStoredJob } from "../queue-body.js";
import type { ParkedJobs } from "./parked-jobs.js";

/**
 * A job waits at least this long after its acceptance before it first runs. Cloudflare
 * Queues do not promise order, and concurrent consumer invocations may hand two messages of
 * one conversation over in the other order a few milliseconds apart: waiting this long lets
 * the earlier one arrive and go first. A message that reaches the consumer later than this
 * (the queue batch wait is up to a second, so most do) does not wait at all.
 */
export const ORDER_HOLD_MS = 200;

/**
 * How long the ids of answered (or dead-lettered) messages are remembered: a queue message
 * delivered again within this time is recognised and not answered twice. Redeliveries of a
 * message already handed over come from a consumer invocation whose acks were lost, after
 * the queue's retry delay (seconds to minutes).
 */
export const ANSWERED_KEPT_MS = 86_400_000;

/** Answered ids are pruned at most this often: pruning reads the whole table, and rows read are billed. */
const PRUNE_EVERY_MS = 3_600_000;

/** What became of a message handed over to the lane. */
export type HandOver = "queued" | "duplicate" | "missing";

/** The job at the head of the lane, the only one that may run. */
export interface LaneHead {
  readonly id: string;
  /** Undefined when the stored job cannot be read (it is then dropped, with a log line). */
  readonly job: Job | undefined;
  /** Epoch ms before which it must not run. */
  readonly nextAt: number;
  /** Set when the job died and its letter still has to reach the dead-letter queue (JSON). */
  readonly letter: string | undefined;
}

type HeadRow = { id: string; job: string; next_at: number; letter: string | null };

// A waiting job's progress, once it has replies, is kept in its `answered` row (see `save`),
// so each lane row is read with that row, if any.
const WITH_PROGRESS = "FROM lane LEFT JOIN answered AS progress ON progress.id = lane.id";

// Started jobs first (at most one: the head keeps running until it is done or dead), then
// acceptance order, then arrival here (messages accepted within one millisecond, which the
// queue hands over in order). A job is started once its replies exist: their sequence
// numbers are taken, so no other job of the conversation may be delivered before it. Its
// replies are in its progress row (`lane.started` marks those an earlier version saved in
// the lane row itself).
const HEAD_ORDER =
  "ORDER BY (lane.started = 1 OR progress.job IS NOT NULL) DESC, lane.received_at, lane.arrival LIMIT 1";

/**
 * The pending jobs of one conversation, in its Durable Object's SQLite (the `lane` and
 * `answered` tables, and their only writer), in acceptance order: the time the endpoint
 * accepted the message (`receivedAt`, stamped before the 200), then the order in which they
 * arrived here. Ordering by acceptance time rather than by arrival here means that messages the
 * queue hands over out of order still run in the order they were accepted, as long as both
 * are here before the earlier one would start. A message that arrives after a later one of
 * its conversation was delivered (an invocation that crashed before handing it over, and the
 * queue's retry delay) runs next: its reply then follows, with the next `sequence`.
 */
export class ConversationLane {
  /** When answered ids were last pruned; in memory, since an instance that starts afresh may prune once more. */
  private prunedAt = 0;

  /** `parked` is where a message too large for a queue message waits until it joins the lane. */
  constructor(
    private readonly sql: MeteredSql,
    private readonly parked: ParkedJobs,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes a message the inbound consumer hands over. Idempotent by message id: a message
   * already waiting here, or answered (its `answered` row kept {@link ANSWERED_KEPT_MS} from
   * its first saved reply, or from its end when it had none), is a duplicate. A
   * message parked (too large for a queue message, or with progress saved by an earlier
   * version) comes with what is stored there, and leaves the parked jobs; a reference to
   * nothing is `missing`.
   */
  add(body: InboundBody): HandOver {
    const { id } = bodyRef(body).stored;
    const seen = this.sql.first<{ n: number }>(
      "SELECT (SELECT COUNT(*) FROM lane WHERE id = ?1) + (SELECT COUNT(*) FROM answered WHERE id = ?1) AS n",
      id,
    );
    if ((seen?.n ?? 0) > 0) return "duplicate";
    const parked = this.parked.find(id);
    const job = parked?.job ?? ("stored" in body ? undefined : newJob(body));
    if (job === undefined) return "missing";
    this.insert(job, job.message.receivedAt + ORDER_HOLD_MS, job.replies === undefined ? 0 : 1, job.message.receivedAt);
    if (parked !== undefined) this.parked.forget(id);
    return "queued";
  }

  /**
   * Takes a replayed dead letter's job: it runs again even though its id was answered (dead-
   * lettered) before. It joins the end of the lane as if accepted at `now`, behind every job
   * already waiting, as on Node (docs/delivery.md, "Replay"). The
   * hand-back is idempotent: a job of that id still waiting here, or with an `answered` row
   * written at or after `markedAt` (the replay that asked for it already ran: its first saved
   * reply, or its end), is a duplicate, so a hand-back
   * repeated after a lost answer never runs the message twice.
   */
  restore(job: Job, now: number, markedAt: number): HandOver {
    const { id } = job.message;
    const seen = this.sql.first<{ n: number }>(
      "SELECT (SELECT COUNT(*) FROM lane WHERE id = ?1) + (SELECT COUNT(*) FROM answered WHERE id = ?1 AND at >= ?2) AS n",
      id,
      markedAt,
    );
    if ((seen?.n ?? 0) > 0) return "duplicate";
    this.sql.run("DELETE FROM answered WHERE id = ?", id);
    this.parked.forget(id);
    // Not started, whatever its replies: `save` marks it once it runs.
    // Held like a new message (ORDER_HOLD_MS), so that one accepted just before the replay and
    // handed over a moment later still goes first.
    this.insert(job, now + ORDER_HOLD_MS, 0, now);
    return "queued";
  }

  /**
   * Adds a job after every other that arrived, to run no earlier than `nextAt`, placed in
   * acceptance order by `acceptedAt` (the message's acceptance, or a replay's moment).
   */
  private insert(job: Job, nextAt: number, started: 0 | 1, acceptedAt: number): void {
    this.sql.run(
      "INSERT INTO lane (id, received_at, arrival, started, next_at, job) VALUES (?, ?, (SELECT COALESCE(MAX(arrival), 0) + 1 FROM lane), ?, ?, ?)",
      job.message.id,
      acceptedAt,
      started,
      nextAt,
      JSON.stringify(job),
    );
  }

  /** The job that may run next, if any. */
  head(): LaneHead | undefined {
    const row = this.sql.first<HeadRow>(
      `SELECT lane.id AS id, COALESCE(progress.job, lane.job) AS job, lane.next_at AS next_at, lane.letter AS letter
        ${WITH_PROGRESS} ${HEAD_ORDER}`,
    );
    if (row === undefined) return undefined;
    return { id: row.id, job: readStoredJob(row.job), nextAt: row.next_at, letter: row.letter ?? undefined };
  }

  /** When the head may run, or undefined when nothing waits. */
  nextRunAt(): number | undefined {
    return this.sql.first<{ next_at: number }>(`SELECT lane.next_at AS next_at ${WITH_PROGRESS} ${HEAD_ORDER}`)
      ?.next_at;
  }

  /** The jobs waiting, in the order they run (the head first); one that cannot be read is left out. */
  waiting(): Job[] {
    const rows = this.sql.all<{ job: string }>(
      `SELECT COALESCE(progress.job, lane.job) AS job ${WITH_PROGRESS}
        ORDER BY (lane.started = 1 OR progress.job IS NOT NULL) DESC, lane.received_at, lane.arrival`,
    );
    return rows.flatMap((row) => {
      const job = readStoredJob(row.job);
      return job === undefined ? [] : [job];
    });
  }

  /** Jobs waiting, the head included. */
  size(): number {
    return this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM lane")?.n ?? 0;
  }

  /**
   * Saves a job's progress; `nextAt` postpones it (a retry). A job with replies keeps its
   * progress in its `answered` row, which then also holds its id once it is answered, and the
   * highest `sequence` of its replies: answering it only deletes its lane row, so an echo
   * message costs three rows written, not four. Before it has replies (a brain's failed
   * attempt), its lane row keeps it. With replies and `nextAt`, the two writes are two
   * statements of one synchronous turn, which the object commits together.
   */
  save(job: Job, nextAt?: number): void {
    const { id } = job.message;
    if (job.replies === undefined) {
      if (nextAt === undefined) this.sql.run("UPDATE lane SET job = ? WHERE id = ?", JSON.stringify(job), id);
      else this.sql.run("UPDATE lane SET job = ?, next_at = ? WHERE id = ?", JSON.stringify(job), nextAt, id);
      return;
    }
    const lastSeq = job.replies.reduce((last, reply) => Math.max(last, reply.sequence), 0);
    this.sql.run(
      `INSERT INTO answered (id, at, last_seq, job) VALUES (?1, ?2, ?3, ?4)
        ON CONFLICT (id) DO UPDATE SET job = excluded.job, last_seq = MAX(COALESCE(last_seq, 0), excluded.last_seq)`,
      id,
      this.now(),
      lastSeq,
      JSON.stringify(job),
    );
    if (nextAt !== undefined) this.postpone(id, nextAt);
  }

  /** Keeps a dead job at the head until its letter is in the dead-letter queue. */
  holdLetter(id: string, letter: string, nextAt: number): void {
    this.sql.run("UPDATE lane SET letter = ?, next_at = ? WHERE id = ?", letter, nextAt, id);
  }

  /** Postpones the head without changing it (nothing can run it now). */
  postpone(id: string, nextAt: number): void {
    this.sql.run("UPDATE lane SET next_at = ? WHERE id = ?", nextAt, id);
  }

  /**
   * Removes a finished job (answered or dead-lettered) and remembers its id, with the last
   * `sequence` its replies took: the conversation's counter is read from these rows (see
   * `ConversationCounters`), so a reply's number costs no write of its own. A job whose
   * replies were saved has its `answered` row already (see `save`): only its lane row goes.
   */
  finish(id: string, now: number): void {
    this.sql.run(
      `INSERT INTO answered (id, at, last_seq) SELECT ?1, ?2,
        (SELECT MAX(json_extract(reply.value, '$.sequence')) FROM lane, json_each(lane.job, '$.replies') AS reply WHERE lane.id = ?1)
        WHERE NOT EXISTS (SELECT 1 FROM answered WHERE id = ?1)`,
      id,
      now,
    );
    this.sql.run("DELETE FROM lane WHERE id = ?", id);
  }

  /** The highest `sequence` taken by a reply of a waiting job or of a job answered recently; 0 when none. */
  lastSequence(): number {
    const row = this.sql.first<{ waiting: number | null; answered: number | null }>(
      `SELECT (SELECT MAX(json_extract(reply.value, '$.sequence')) FROM lane, json_each(lane.job, '$.replies') AS reply) AS waiting,
        (SELECT MAX(last_seq) FROM answered) AS answered`,
    );
    return Math.max(row?.waiting ?? 0, row?.answered ?? 0);
  }

  /**
   * Forgets answered ids older than {@link ANSWERED_KEPT_MS}, at most once per
   * {@link PRUNE_EVERY_MS}; `keepSequence` is told the highest `sequence` they held first, so
   * numbering never goes back.
   */
  prune(now: number, keepSequence: (last: number) => void): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    const cutoff = now - ANSWERED_KEPT_MS;
    // The progress of a job still waiting (retried for longer than a day) is not an old id.
    const old = this.sql.first<{ last: number | null; n: number }>(
      "SELECT MAX(last_seq) AS last, COUNT(*) AS n FROM answered WHERE at < ? AND id NOT IN (SELECT id FROM lane)",
      cutoff,
    );
    if (old === undefined || old.n === 0) return;
    if (old.last !== null) keepSequence(old.last);
    this.sql.run("DELETE FROM answered WHERE at < ? AND id NOT IN (SELECT id FROM lane)", cutoff);
  }

  /** Forgets every answered id (the conversation expired, with nothing waiting). */
  clearAnswered(): void {
    this.sql.run("DELETE FROM answered");
  }
}
