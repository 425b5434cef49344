import { type Job, lastTakenSequence } from "../../core/lifecycle/job.js";
import type { MeteredSql } from "../metered-sql.js";
import { fitsOneValue, piecesOf } from "../sqlite-pieces.js";

/** Which table's rows a piece belongs to: the same message id may be in both. */
export type PiecesOwner = "answered" | "jobs" | "lane";

/** What a row holds in place of a job too long for one value: valid JSON, never a job's. */
const STAND_IN_START = '{"pieces":';

/**
 * The `job_pieces` table of a conversation object, for one owner table (`answered`, `jobs` or
 * `lane`):
 * a job whose JSON is too long for one SQLite value (a message near 1 MiB with its rendered
 * replies, or a brain's long answer) is kept here in pieces, and its row holds a stand-in. The
 * stand-in carries the message's `receivedAt` and its replies' last `sequence` where a job
 * would, so that the SQL that reads them from a row (a lane row made from an `answered` one,
 * the lane's last number) still finds them.
 *
 * A job short enough, which is nearly every one, writes and reads nothing here. The ids whose
 * pieces this instance wrote or read are remembered, so that forgetting any other costs no
 * statement; a new instance learns them as it reads the stand-ins of the jobs it runs.
 */
export class JobPieces {
  private readonly known = new Set<string>();

  constructor(
    private readonly sql: MeteredSql,
    private readonly owner: PiecesOwner,
  ) {}

  /** What the row of `job` keeps: its JSON, or, when too long, a stand-in of the pieces written here. */
  store(job: Job): string {
    const { id } = job.message;
    const json = JSON.stringify(job);
    if (fitsOneValue(json)) {
      this.forget(id);
      return json;
    }
    this.sql.run("DELETE FROM job_pieces WHERE owner = ? AND id = ?", this.owner, id);
    const pieces = piecesOf(json);
    for (const [piece, data] of pieces.entries()) {
      this.sql.run("INSERT INTO job_pieces (owner, id, piece, data) VALUES (?, ?, ?, ?)", this.owner, id, piece, data);
    }
    this.known.add(id);
    const replies = job.replies === undefined ? {} : { replies: [{ sequence: lastTakenSequence(job) }] };
    return JSON.stringify({ pieces: pieces.length, message: { receivedAt: job.message.receivedAt }, ...replies });
  }

  /** The JSON of the job whose row holds `stored`: itself, or its pieces joined. */
  read(id: string, stored: string): string {
    if (!stored.startsWith(STAND_IN_START)) return stored;
    this.known.add(id);
    return this.sql
      .all<{ data: string }>("SELECT data FROM job_pieces WHERE owner = ? AND id = ? ORDER BY piece", this.owner, id)
      .map((row) => row.data)
      .join("");
  }

  /** Deletes the pieces of `id`, when this instance wrote or read any; `always` looks in any case. */
  forget(id: string, always = false): void {
    if (!always && !this.known.has(id)) return;
    this.known.delete(id);
    this.sql.run("DELETE FROM job_pieces WHERE owner = ? AND id = ?", this.owner, id);
  }

  /** Deletes the pieces of the rows that `rows` names: a `SELECT id` whose parameters are `?2` on. */
  forgetWhere(rows: string, ...params: SqlStorageValue[]): void {
    this.sql.run(`DELETE FROM job_pieces WHERE owner = ?1 AND id IN (${rows})`, this.owner, ...params);
  }

  /** Deletes every piece of the owner (the conversation expired). */
  clear(): void {
    this.known.clear();
    this.sql.run("DELETE FROM job_pieces WHERE owner = ?", this.owner);
  }
}
