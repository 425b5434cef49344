import type { Pool } from "pg";
import type { AuthFailureLimiter } from "../../core/auth-limit/auth-failure-limiter.js";
import type { ConversationStore } from "../../core/conversation/conversation-store.js";
import type { SequenceCounter } from "../../core/conversation/sequence-counter.js";
import type { DeadLetterStore } from "../../core/dead-letters/dead-letter-store.js";
import type { RestoreJob } from "../../core/dead-letters/memory-dead-letter-store.js";
import type { IdempotencyStore } from "../../core/idempotency/idempotency-store.js";
import type { PendingJobStore } from "../../core/lifecycle/pending-job-store.js";
import type { PostgresPendingJobStore } from "./postgres/postgres-pending-job-store.js";
import type { PostgresSequenceCounter } from "./postgres/postgres-sequence-counter.js";
import type { SqlitePendingJobStore } from "./sqlite-pending-job-store.js";
import type { StateDb } from "./sqlite-state.js";

/**
 * Where a Node service keeps what it accepted and what it remembers, chosen once at start
 * from the configuration: in memory, in SQLite under `state_dir`, or in Postgres shared by
 * several replicas (`postgres_url_env`). It supplies every store,
 * so no other part asks which mode it runs in; the memory mode's stores are real (memory,
 * or the volatile job store that keeps nothing, since the job queue is then the only copy).
 */
export interface StateBackend {
  readonly mode: "memory" | "sqlite" | "postgres";
  /** Accepted jobs until they are finished. */
  readonly jobs: PendingJobStore;
  readonly idempotency: IdempotencyStore;
  /** Conversation memory (the history brains are given). */
  readonly conversations: ConversationStore;
  /** Reply `sequence` numbers per conversation. */
  readonly sequences: SequenceCounter;
  /**
   * With `state_dir`: the database (the dead-letter admin, `/readyz` and `/metrics` read it)
   * and the durable job store that gives back unfinished and replayed jobs.
   */
  readonly sqlite: { readonly db: StateDb; readonly jobs: SqlitePendingJobStore } | undefined;
  /**
   * With `postgres_url_env`: the pool (the replicas' lane leases use it), the job store that
   * gives back a conversation's jobs when this replica takes it over, the sequence counter
   * that must forget a conversation it gives up, and the auth-failure limit all replicas share.
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
  /** Where it is, for the start's log line. */
  describe(): Readonly<Record<string, string>>;
  /** Forgets what expired (idempotency keys) while nothing runs yet. */
  prune(now: number): void;
  close(): void | Promise<void>;
}

/** What the Postgres mode gives the replica coordination. */
export interface PostgresParts {
  readonly pool: Pool;
  readonly jobs: PostgresPendingJobStore;
  readonly sequences: PostgresSequenceCounter;
  readonly authFailures: AuthFailureLimiter;
}
