import { type Job, lastTakenSequence } from "../../core/lifecycle/job.js";
import type { MeteredSql } from "../metered-sql.js";
import { JobPieces } from "./job-pieces.js";

/**
 * How long the ids of answered (or dead-lettered) messages are remembered at least: a queue
 * message delivered again within this time is recognised and not answered twice. Redeliveries of
 * a message already handed over come from a consumer invocation whose acks were lost, after the
 * queue's retry delay (seconds to minutes).
 */
export const ANSWERED_KEPT_MS = 86_400_000;

/** Old rows are looked for at most this often: the look reads the whole table, and rows read are billed. */
const LOOK_EVERY_MS = 3_600_000;

/** Old rows taken for reuse by one look. */
const REUSE_BATCH = 64;

/** The `sequence` a job's replies took last (see `lastTakenSequence`), or null when it has none. */
export function lastSequenceOf(job: Job): number | null {
  return job.replies === undefined || job.replies.length === 0 ? null : lastTakenSequence(job);
}

/**
 * The `answered` table of a conversation object, and its only writer: one row per message that
 * was answered or dead-lettered within {@link ANSWERED_KEPT_MS} (its id, when, the last `sequence`
 * of its replies), which also holds a running job's progress once it has replies (`job`), so that
 * saving the replies and keeping the id is one row written.
 *
 * `open` marks the progress of a job that has no lane row (the conversation lane's job run in the
 * hand-over that brought it): the row is then all that is stored of it, and it is closed (`open`
 * and `job` cleared, one row written) when the job ends. An open row found by a new instance is a
 * run that stopped with its object: the lane takes it back ({@link ConversationLane.adoptOpen}).
 *
 * A row older than {@link ANSWERED_KEPT_MS} whose job ended is not deleted (a deleted row is a
 * billed write) but taken over by the next id to keep, in the same one write; the rows of a
 * conversation are as many as it kept ids in its busiest day. A row that still holds a job's text
 * (it waited behind another, or an earlier version wrote it) is deleted once old.
 */
export class AnsweredIds {
  private prunedAt = 0;
  private lookedAt = 0;
  private reusable: string[] = [];
  /** Where a job too long for one value is kept (see {@link JobPieces}). */
  private readonly pieces: JobPieces;

  constructor(
    private readonly sql: MeteredSql,
    private readonly now: () => number = Date.now,
  ) {
    this.pieces = new JobPieces(sql, "answered");
  }

  /** The JSON of the job whose row holds `stored` in its `job`, its pieces joined. */
  jobText(id: string, stored: string): string {
    return this.pieces.read(id, stored);
  }

  /**
   * Saves the progress of a job with replies, with their last `sequence`; `open` when the job has
   * no lane row. One row written: the job's own row, updated, or a new one.
   */
  save(job: Job, open: boolean): void {
    const { id } = job.message;
    const last = lastSequenceOf(job) ?? 0;
    const json = this.pieces.store(job);
    const updated = this.sql.all(
      `UPDATE answered SET job = ?2, last_seq = MAX(COALESCE(last_seq, 0), ?3), open = CASE WHEN ?4 = 1 THEN 1 ELSE open END
        WHERE id = ?1 RETURNING id`,
      id,
      json,
      last,
      open ? 1 : 0,
    );
    if (updated.length === 0) this.keep(id, last, json, open ? 1 : null);
  }

  /** Keeps the id of a job that ended without saved progress, unless it is kept already. */
  record(id: string, lastSequence: number | null): void {
    if (this.has(id)) return;
    this.keep(id, lastSequence, null, null);
  }

  /** A job whose row is open ended: its row keeps only the id and the last `sequence` from now on. */
  close(id: string): void {
    this.sql.run("UPDATE answered SET open = NULL, job = NULL WHERE id = ? AND open = 1", id);
    this.pieces.forget(id);
  }

  /** Whether the id is kept. */
  has(id: string): boolean {
    return this.sql.first("SELECT 1 AS n FROM answered WHERE id = ?", id) !== undefined;
  }

  /**
   * Forgets an id (its dead letter is replayed and runs again). The row stays under another id
   * until it is old enough to be taken over: it may hold the conversation's last `sequence`, taken
   * over from an older row, which a deletion would lose (the next reply would reuse it).
   */
  forget(id: string): void {
    this.sql.run(
      "UPDATE answered SET id = 'forgotten:' || ?2 || ':' || id, job = NULL, open = NULL WHERE id = ?1",
      id,
      this.now(),
    );
    this.pieces.forget(id, true);
  }

  /** Forgets every id (the conversation expired, with nothing waiting). */
  clear(): void {
    this.sql.run("DELETE FROM answered");
    this.pieces.clear();
  }

  /**
   * Deletes the rows older than {@link ANSWERED_KEPT_MS} that still hold a job's text and whose
   * job is not waiting, at most once per {@link LOOK_EVERY_MS}; `keepSequence` is told the
   * highest `sequence` they held first, so numbering never goes back.
   */
  prune(now: number, keepSequence: (last: number) => void): void {
    if (now - this.prunedAt < LOOK_EVERY_MS) return;
    this.prunedAt = now;
    const cutoff = now - ANSWERED_KEPT_MS;
    const old = "FROM answered WHERE at < ?1 AND job IS NOT NULL AND id NOT IN (SELECT id FROM lane)";
    const found = this.sql.first<{ last: number | null; n: number }>(
      `SELECT MAX(last_seq) AS last, COUNT(*) AS n ${old}`,
      cutoff,
    );
    if (found === undefined || found.n === 0) return;
    if (found.last !== null) keepSequence(found.last);
    this.pieces.forgetWhere(
      "SELECT id FROM answered WHERE at < ?2 AND job IS NOT NULL AND id NOT IN (SELECT id FROM lane)",
      cutoff,
    );
    this.sql.run(`DELETE ${old}`, cutoff);
  }

  /** Keeps an id in a new row, or in an old one taken over (see the class). */
  private keep(id: string, last: number | null, job: string | null, open: 1 | null): void {
    const now = this.now();
    for (let old = this.takeReusable(now); old !== undefined; old = this.takeReusable(now)) {
      // Its last number stays in the row (the highest wins), so the counter needs no write.
      const taken = this.sql.all(
        `UPDATE answered SET id = ?1, at = ?2, last_seq = MAX(COALESCE(last_seq, 0), COALESCE(?3, 0)), job = ?4, open = ?5
          WHERE id = ?6 AND at < ?7 AND open IS NULL AND job IS NULL RETURNING id`,
        id,
        now,
        last,
        job,
        open,
        old,
        now - ANSWERED_KEPT_MS,
      );
      if (taken.length > 0) return;
    }
    this.sql.run("INSERT INTO answered (id, at, last_seq, job, open) VALUES (?, ?, ?, ?, ?)", id, now, last, job, open);
  }

  /** An old row to take over, looked for at most once per {@link LOOK_EVERY_MS}. */
  private takeReusable(now: number): string | undefined {
    if (this.reusable.length === 0 && now - this.lookedAt >= LOOK_EVERY_MS) {
      this.lookedAt = now;
      this.reusable = this.sql
        .all<{ id: string }>(
          "SELECT id FROM answered WHERE at < ? AND open IS NULL AND job IS NULL LIMIT ?",
          now - ANSWERED_KEPT_MS,
          REUSE_BATCH,
        )
        .map((row) => row.id);
    }
    return this.reusable.pop();
  }
}
