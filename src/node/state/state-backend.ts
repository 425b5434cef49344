import type { Pool } from "pg";
import type { AuthFailureLimiter } from "../../core/auth-limit/auth-failure-limiter.js";
import type { ConversationStore } from "../../core/conversation/conversation-store.js";
import type { DeadLetterStore } from "../../core/dead-letters/dead-letter-store.js";
import type { RestoreJob } from "../../core/dead-letters/memory-dead-letter-store.js";
import type { IdempotencyStore } from "../../core/idempotency/idempotency-store.js";
import type { LaneStore } from "../../core/lifecycle/lane-store.js";
import type { CircuitStore } from "../../core/receiver/circuit-store.js";
import type { TimelineStore } from "../../core/timeline/timeline-store.js";
import type { PostgresLaneStore } from "./postgres/postgres-lane-store.js";
import type { SqliteLaneStore } from "./sqlite/sqlite-lane-store.js";
import type { StateDb } from "./sqlite/sqlite-state.js";

/**
 * Where a Node service keeps what it accepted and what it remembers, chosen once at start
 * from the configuration: in memory, in SQLite under `state_dir`, or in Postgres shared by
 * several replicas (`postgres_url_env`). It supplies every store,
 * so no other part asks which mode it runs in; the memory mode's stores are real (memory,
 * or the volatile job store that keeps nothing, since the job queue is then the only copy).
 */
export interface StateBackend {
  readonly mode: "memory" | "sqlite" | "postgres";
  /**
   * The lanes: accepted jobs until they are finished, each conversation's last reply number,
   * the turns its brain step adds to the memory, and replayed dead letters until picked up.
   */
  readonly lanes: LaneStore;
  /** The epoch of this process's tickets where it runs its lanes alone (memory, SQLite). */
  readonly epoch: number;
  readonly idempotency: IdempotencyStore;
  /** Where each channel's receiver circuit is kept: this process's memory, or the row the replicas share. */
  readonly circuits: CircuitStore;
  /** With a shared circuit store, how often a replica holding lanes reads it again; undefined alone. */
  readonly circuitRefreshMs: number | undefined;
  /** Conversation memory (the history brains are given). */
  readonly conversations: ConversationStore;
  /** Every message's timeline (any replica reads what all of them wrote, on Postgres). */
  readonly timeline: TimelineStore;
  /**
   * With `state_dir`: the database (the dead-letter admin, `/readyz` and `/metrics` read it)
   * and the durable job store that gives back unfinished and replayed jobs.
   */
  readonly sqlite: { readonly db: StateDb; readonly lanes: SqliteLaneStore } | undefined;
  /**
   * With `postgres_url_env`: the pool (the replicas' lane leases use it), the lane store whose
   * tickets the replica coordination hands out, and the auth-failure limit all replicas share.
   */
  readonly postgres: PostgresParts | undefined;
  /**
   * The store the admin API keeps dead letters in: the `dead_letters` table with `state_dir`,
   * else a list in memory whose replays go back through `restore` (the channel's queue).
   */
  deadLetterStore(restore: RestoreJob): DeadLetterStore;
  /**
   * Dead letters stored now, per channel, for `/readyz` and `/metrics`; undefined when
   * nothing outlives the job queues, which then count those made since start.
   */
  storedDeadLetters(): ReadonlyMap<string, number> | undefined;
  /** Why the state cannot be written now (`/readyz` says `unavailable`), undefined when it can. */
  writeProblem(): string | undefined;
  /**
   * Why this process has lost the state to another one for good (with `state_dir`, another
   * process claimed the file since): a cheap read, asked on a timer, so that the process says so
   * and stops rather than answer 503 until someone looks. Undefined where no such loss exists.
   */
  readonly claimLost: (() => string | undefined) | undefined;
  /**
   * What stops the state's writes, known without asking it (Postgres: its probe's last finding),
   * so that a new message is refused at once rather than wait for a write's time limit; undefined
   * where a write answers at once (memory, SQLite).
   */
  readonly knownWriteProblem: (() => string | undefined) | undefined;
  /**
   * When a write check last committed (`performance.now()` at its start), asked by `/readyz`
   * only while a queue's last write failed: that failure stands until a write succeeds, and a
   * replica no balancer sends to (because it said `unavailable`) writes no message to clear
   * it. Undefined while checks fail. SQLite checks now; Postgres answers from its probe.
   */
  writesConfirmedAt(): number | undefined;
  /** Where it is, for the start's log line. */
  describe(): Readonly<Record<string, string | number>>;
  /**
   * Deletes what expired at `now` (idempotency keys; on Postgres also the failed-authentication
   * windows), in short batches; resolves with how many rows. The memory mode's stores bound
   * themselves, and delete none here.
   */
  pruneExpired(now: number): Promise<number>;
  /**
   * Deletes the conversation turns older than `cutoff` (epoch milliseconds, from
   * `retentionCutoff`), in short batches; resolves with how many. The memory mode's store drops
   * them itself, and deletes none here.
   */
  pruneConversations(cutoff: number): Promise<number>;
  /**
   * Forgets the reply counter of each conversation last active before `cutoff` (epoch
   * milliseconds, from `idleCutoff`) with no job waiting, in short batches; resolves with how
   * many. The memory mode bounds its counters by count instead, and forgets none here.
   */
  forgetIdleConversations(cutoff: number): Promise<number>;
  close(): void | Promise<void>;
}

/** What the Postgres mode gives the replica coordination. */
export interface PostgresParts {
  readonly pool: Pool;
  readonly lanes: PostgresLaneStore;
  readonly authFailures: AuthFailureLimiter;
  /** This process's id among the replicas (the owner its lanes name). */
  readonly replica: string;
}

/**
 * Who opens the state: the service, which runs the lanes (and, with `state_dir`, claims the file),
 * or a reader beside it (the delivery thread reads conversation memory), which claims nothing.
 */
export type StateRole = "service" | "reader";
