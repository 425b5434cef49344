import { type Job, newJob } from "../../core/lifecycle/job.js";
import type { MeteredSql } from "../metered-sql.js";
import { bodyRef, type InboundBody, readStoredJob } from "../queue-body.js";
import { type AnsweredIds, lastSequenceOf } from "./answered-ids.js";
import { JobPieces } from "./job-pieces.js";
import { type HandOver, type LaneHead, ORDER_HOLD_MS } from "./lane-head.js";
import type { ParkedJobs } from "./parked-jobs.js";

export { type HandOver, type LaneHead, ORDER_HOLD_MS } from "./lane-head.js";

type HeadRow = { id: string; progress: string | null; job: string; next_at: number; letter: string | null };

/** A job handed over to an empty lane and not stored yet (see {@link ConversationLane.add}). */
type UnstoredJob = { job: Job; nextAt: number; readonly acceptedAt: number };

/** What a lane row is stored with when an unstored job must be kept. */
type StoredState = { readonly job?: Job; readonly nextAt?: number; readonly letter?: string };

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
 *
 * A message handed over alone to an empty lane is not stored at once: the queue keeps it until
 * the hand-over returns, and if it is answered by then, its `answered` row (its replies saved
 * before they are posted, then closed) is all it writes. It is stored ({@link persist}) when
 * anything else must wait with it (another message, a retry, a letter), or when the hand-over
 * returns before its replies are saved ({@link secure}).
 */
export class ConversationLane {
  /** The job handed over and not stored yet; only ever while no lane row exists. */
  private unstored: UnstoredJob | undefined;
  /** Where a lane row's job too long for one value is kept (a replayed job with long replies). */
  private readonly pieces: JobPieces;

  /** `parked`: where a message too large for a queue message waits; `orderHoldMs`: {@link ORDER_HOLD_MS}. */
  constructor(
    private readonly sql: MeteredSql,
    private readonly parked: ParkedJobs,
    private readonly answered: AnsweredIds,
    readonly orderHoldMs: number = ORDER_HOLD_MS,
  ) {
    this.pieces = new JobPieces(sql, "lane");
  }

  /**
   * Takes a message the inbound consumer hands over. Idempotent by message id: a message
   * already waiting here, or answered (its `answered` row kept at least a day), is a duplicate. A
   * message parked (too large for a queue message, or with progress saved by an earlier
   * version) comes with what is stored there, and leaves the parked jobs; a reference to
   * nothing is `missing`. With `unstored`, a new message that finds the lane empty stays in
   * memory until {@link persist} (see the class).
   */
  add(body: InboundBody, unstored = false): HandOver {
    const { id } = bodyRef(body).stored;
    if (this.unstored?.job.message.id === id) {
      this.persist(); // a copy of the job kept in memory is acked only once the job is stored
      return "duplicate";
    }
    const seen = this.sql.first<{ n: number; waiting: number }>(
      `SELECT (SELECT COUNT(*) FROM lane WHERE id = ?1) + (SELECT COUNT(*) FROM answered WHERE id = ?1) AS n,
        EXISTS (SELECT 1 FROM lane) AS waiting`,
      id,
    );
    if ((seen?.n ?? 0) > 0) return "duplicate";
    const parked = this.parked.find(id);
    const job = parked?.job ?? ("stored" in body ? undefined : newJob(body));
    if (job === undefined) return "missing";
    const { receivedAt } = job.message;
    if (unstored && this.unstored === undefined && seen?.waiting === 0 && parked === undefined) {
      this.unstored = { job, nextAt: receivedAt + this.orderHoldMs, acceptedAt: receivedAt };
      return "queued";
    }
    this.persist();
    this.insert(job, receivedAt + this.orderHoldMs, job.replies === undefined ? 0 : 1, receivedAt);
    if (parked !== undefined) this.parked.forget(id);
    return "queued";
  }

  /**
   * Makes sure the job kept in memory outlives this instance: stored in its lane row, unless its
   * saved replies already are (its `open` answered row, which a new instance takes back).
   */
  secure(): void {
    if (this.unstored?.job.replies === undefined) this.persist();
  }

  /** Stores the job kept in memory, if any (see the class); `state` is what it is stored with. */
  persist(state: StoredState = {}): void {
    const kept = this.unstored;
    if (kept === undefined) return;
    this.unstored = undefined;
    // Its progress, once it has replies, is in its `answered` row, which the head reads with it.
    this.insert(state.job ?? kept.job, state.nextAt ?? kept.nextAt, 0, kept.acceptedAt, state.letter);
  }

  /**
   * Takes back the jobs whose run stopped with an earlier instance before they were stored: an
   * `open` answered row without a lane row (see {@link AnsweredIds}). They had replies, so they
   * go first, and run again from their saved progress.
   */
  adoptOpen(): void {
    this.sql.run(
      `INSERT INTO lane (id, received_at, arrival, started, next_at, job)
        SELECT id, COALESCE(json_extract(job, '$.message.receivedAt'), at), (SELECT COALESCE(MAX(arrival), 0) + 1 FROM lane), 1, 0, job
        FROM answered WHERE open = 1 AND job IS NOT NULL AND id NOT IN (SELECT id FROM lane)`,
    );
  }

  /**
   * Takes a replayed dead letter's job: it runs again even though its id was answered (dead-
   * lettered) before. It joins the end of the lane as if accepted at `now`, behind every job
   * already waiting, as on Node (docs/delivery.md, "Replay"). The hand-back is idempotent: a job
   * of that id still waiting here, or with an `answered` row written at or after `markedAt` (the
   * replay that asked for it already ran: its first saved reply, or its end), is a duplicate, so
   * a hand-back repeated after a lost answer never runs the message twice.
   */
  restore(job: Job, now: number, markedAt: number): HandOver {
    const { id } = job.message;
    const seen = this.sql.first<{ n: number }>(
      "SELECT (SELECT COUNT(*) FROM lane WHERE id = ?1) + (SELECT COUNT(*) FROM answered WHERE id = ?1 AND at >= ?2) AS n",
      id,
      markedAt,
    );
    if ((seen?.n ?? 0) > 0) return "duplicate";
    this.persist();
    this.answered.forget(id);
    this.parked.forget(id);
    // Not started, whatever its replies: `save` marks it once it runs. Held like a new message,
    // so that one accepted just before the replay and handed over a moment later still goes first.
    this.insert(job, now + this.orderHoldMs, 0, now);
    return "queued";
  }

  /**
   * Adds a job after every other that arrived, to run no earlier than `nextAt`, placed in
   * acceptance order by `acceptedAt` (the message's acceptance, or a replay's moment).
   */
  private insert(job: Job, nextAt: number, started: 0 | 1, acceptedAt: number, letter?: string): void {
    this.sql.run(
      "INSERT INTO lane (id, received_at, arrival, started, next_at, job, letter) VALUES (?, ?, (SELECT COALESCE(MAX(arrival), 0) + 1 FROM lane), ?, ?, ?, ?)",
      job.message.id,
      acceptedAt,
      started,
      nextAt,
      this.pieces.store(job),
      letter ?? null,
    );
  }

  /** The job a lane row and its progress row hold, their pieces joined; undefined when unreadable. */
  private jobOf(row: { readonly id: string; readonly progress: string | null; readonly job: string }): Job | undefined {
    if (row.progress !== null) return readStoredJob(this.answered.jobText(row.id, row.progress));
    return readStoredJob(this.pieces.read(row.id, row.job));
  }

  /** Whether `id` is the job kept in memory. */
  private isUnstored(id: string): boolean {
    return this.unstored?.job.message.id === id;
  }

  /** The job that may run next, if any. */
  head(): LaneHead | undefined {
    const kept = this.unstored;
    if (kept !== undefined) return { id: kept.job.message.id, job: kept.job, nextAt: kept.nextAt, letter: undefined };
    const row = this.sql.first<HeadRow>(
      `SELECT lane.id AS id, progress.job AS progress, lane.job AS job, lane.next_at AS next_at, lane.letter AS letter
        ${WITH_PROGRESS} ${HEAD_ORDER}`,
    );
    if (row === undefined) return undefined;
    return { id: row.id, job: this.jobOf(row), nextAt: row.next_at, letter: row.letter ?? undefined };
  }

  /** When the head may run, or undefined when nothing waits. */
  nextRunAt(): number | undefined {
    if (this.unstored !== undefined) return this.unstored.nextAt;
    return this.sql.first<{ next_at: number }>(`SELECT lane.next_at AS next_at ${WITH_PROGRESS} ${HEAD_ORDER}`)
      ?.next_at;
  }

  /** The jobs waiting, in the order they run (the head first); one that cannot be read is left out. */
  waiting(): Job[] {
    if (this.unstored !== undefined) return [this.unstored.job];
    const rows = this.sql.all<{ id: string; progress: string | null; job: string }>(
      `SELECT lane.id AS id, progress.job AS progress, lane.job AS job ${WITH_PROGRESS}
        ORDER BY (lane.started = 1 OR progress.job IS NOT NULL) DESC, lane.received_at, lane.arrival`,
    );
    return rows.flatMap((row) => {
      const job = this.jobOf(row);
      return job === undefined ? [] : [job];
    });
  }

  /** Jobs waiting, the head included. */
  size(): number {
    if (this.unstored !== undefined) return 1;
    return this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM lane")?.n ?? 0;
  }

  /**
   * Saves a job's progress; `nextAt` postpones it (a retry). A job with replies keeps it in its
   * `answered` row, which also keeps its id once it is answered; before it has replies (a brain's
   * failed attempt), its lane row keeps it. Two writes are two statements of one synchronous
   * turn, which the object commits together.
   */
  save(job: Job, nextAt?: number): void {
    const { id } = job.message;
    const kept = this.isUnstored(id) ? this.unstored : undefined;
    if (job.replies !== undefined) this.answered.save(job, kept !== undefined);
    if (kept !== undefined) {
      kept.job = job;
      if (nextAt !== undefined) this.persist({ nextAt });
      return;
    }
    if (job.replies !== undefined) {
      if (nextAt !== undefined) this.postpone(id, nextAt);
      return;
    }
    if (nextAt === undefined) this.sql.run("UPDATE lane SET job = ? WHERE id = ?", this.pieces.store(job), id);
    else this.sql.run("UPDATE lane SET job = ?, next_at = ? WHERE id = ?", this.pieces.store(job), nextAt, id);
  }

  /** Keeps a dead job at the head until its letter is in the dead-letter queue. */
  holdLetter(id: string, letter: string, nextAt: number): void {
    if (this.isUnstored(id)) this.persist({ letter, nextAt });
    else this.sql.run("UPDATE lane SET letter = ?, next_at = ? WHERE id = ?", letter, nextAt, id);
  }

  /** Postpones the head without changing it (nothing can run it now). */
  postpone(id: string, nextAt: number): void {
    if (this.unstored !== undefined && this.isUnstored(id)) this.unstored.nextAt = nextAt;
    else this.sql.run("UPDATE lane SET next_at = ? WHERE id = ?", nextAt, id);
  }

  /**
   * Removes a finished job (answered or dead-lettered) and keeps its id with the last `sequence`
   * its replies took (the counter reads them: a number costs no write of its own). A job whose
   * replies were saved has its `answered` row already: its lane row goes, or its row is closed.
   */
  finish(id: string): void {
    const kept = this.isUnstored(id) ? this.unstored : undefined;
    if (kept !== undefined) {
      this.unstored = undefined;
      if (kept.job.replies === undefined) this.answered.record(id, null);
      else this.answered.close(id);
      return;
    }
    const row = this.sql.first<{ job: string }>("SELECT job FROM lane WHERE id = ?", id);
    const job = row === undefined ? undefined : this.jobOf({ id, progress: null, job: row.job });
    this.answered.record(id, job === undefined ? null : lastSequenceOf(job));
    this.answered.close(id);
    this.sql.run("DELETE FROM lane WHERE id = ?", id);
    this.pieces.forget(id);
  }

  /** The highest `sequence` taken by a reply of a waiting job or of a job answered recently; 0 when none. */
  lastSequence(): number {
    const row = this.sql.first<{ waiting: number | null; answered: number | null }>(
      `SELECT (SELECT MAX(json_extract(reply.value, '$.sequence')) FROM lane, json_each(lane.job, '$.replies') AS reply) AS waiting,
        (SELECT MAX(last_seq) FROM answered) AS answered`,
    );
    return Math.max(row?.waiting ?? 0, row?.answered ?? 0);
  }

  /** Forgets old answered ids that hold a job's text (see {@link AnsweredIds.prune}). */
  prune(now: number, keepSequence: (last: number) => void): void {
    this.answered.prune(now, keepSequence);
  }

  /** Forgets every answered id (the conversation expired, with nothing waiting). */
  clearAnswered(): void {
    this.answered.clear();
  }
}
