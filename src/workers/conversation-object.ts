import { DurableObject } from "cloudflare:workers";
import { errorMessage } from "../core/channel-error.js";
import type { Consumer } from "../core/consumer/create-consumer.js";
import type { ConversationTurn } from "../core/conversation/conversation-store.js";
import type { Job } from "../core/delivery/job.js";
import type { Logger } from "../core/log/logger.js";
import { ConversationLane, type HandOver } from "./conversation-lane.js";
import { ConversationMemory } from "./conversation-memory.js";
import { createConversationTables } from "./conversation-tables.js";
import { DEAD_LETTER_STORE_NAME } from "./dead-letters/dead-letter-object.js";
import { createObjectConsumer, deliveryFor } from "./delivery-parts.js";
import { runDueJobs } from "./lane-runner.js";
import { MeteredSql, type StorageUsage } from "./metered-sql.js";
import { objectEnvironment } from "./object-environment.js";
import { type InboundBody, readDeadLetterBody, readJob } from "./queue-body.js";
import { workersReplayHint } from "./replay-hint.js";
import type { WorkerEnv } from "./worker-env.js";

export { MAX_TURNS } from "./conversation-memory.js";

/**
 * A conversation untouched this long is deleted whole (history, sequence counter, stored
 * jobs), so storage stays bounded however many senders come and go. It is far longer than
 * any retry lasts (`max_age_ms` defaults to 24 h), and never applies while jobs wait.
 */
export const CONVERSATION_TTL_MS = 30 * 86_400_000;

/** `touched_at` is rewritten at most this often: the expiry needs no finer clock, and rows written are billed. */
const TOUCH_EVERY_MS = 3_600_000;

/**
 * One conversation of one channel, addressed by `idFromName(conversationKey(...))`: the
 * sequencer of its replies. The inbound consumer hands it each message ({@link enqueue});
 * it keeps them in SQLite in acceptance order and runs the head job with the core consumer
 * (brain, then replies), one job at a time. A retry sets the alarm to the policy's delay, to
 * the millisecond, and later jobs wait behind it; a dead letter goes to the dead-letter
 * queue and the next job runs. It also holds the conversation's memory, its reply sequence
 * counter and parked jobs; its dead letters go to the {@link DeadLetterObject}.
 *
 * One alarm serves everything: it is set to the head job's next run while jobs wait, else to
 * the expiry. Jobs only run in `alarm()`, and an in-memory flag keeps a second alarm (a test
 * running it by hand, the platform's at-least-once retry) from running the lane at the same
 * time: calls that arrive while a job awaits its brain or receiver only add to the lane, and
 * the running loop takes what they added. An instance is unique and its memory is lost with
 * it, so the flag needs no storage.
 */
export class ConversationObject extends DurableObject<WorkerEnv> {
  private readonly sql: MeteredSql;
  private readonly memory: ConversationMemory;
  private readonly lane: ConversationLane;
  private running = false;
  /** Whether this instance looked for dead letters an earlier version kept here (see {@link moveOldDeadLetters}). */
  private oldLettersMoved = false;
  /** When answered ids were last pruned: pruning reads the whole table, so it runs hourly at most. */
  private prunedAt = 0;
  /** The alarm as set, null for none, undefined until read: `setAlarm` is billed, so it is not repeated. */
  private alarmAt: number | null | undefined;
  private consumer: { readonly env: WorkerEnv; readonly built: Promise<Consumer | undefined> } | undefined;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new MeteredSql(ctx.storage.sql);
    this.memory = new ConversationMemory(this.sql);
    this.lane = new ConversationLane(this.sql);
    createConversationTables(this.sql);
  }

  /** What this instance did that is billed; read by the cost test. */
  get usage(): StorageUsage {
    return { ...this.sql.usage };
  }

  /**
   * Takes the inbound queue's messages of this conversation, idempotent by message id, and
   * resolves once they are stored: the consumer acks them then. One result per body.
   */
  async enqueue(bodies: readonly InboundBody[]): Promise<HandOver[]> {
    const results = bodies.map((body) => this.lane.add(body));
    await this.touch();
    return results;
  }

  /** The last `limit` turns (at most {@link MAX_TURNS}), oldest first. */
  history(limit: number): ConversationTurn[] {
    return this.memory.history(limit);
  }

  /** Appends turns in order and drops all but the last {@link MAX_TURNS}. */
  async append(turns: readonly ConversationTurn[]): Promise<void> {
    this.memory.append(turns);
    await this.touch();
  }

  /** Reserves `count` reply sequence numbers (1, 2, 3… per conversation) and returns the first. */
  async reserveSequence(count: number): Promise<number> {
    const first = this.memory.reserveSequence(count);
    await this.touch();
    return first;
  }

  /** Parks a job (replacing an earlier state of it) until {@link forgetJob} or its hand-over. */
  async storeJob(job: Job): Promise<void> {
    this.park(job);
    await this.touch();
  }

  /** A parked job, or null when there is none under that message id. */
  storedJob(id: string): Job | null {
    const row = this.sql.first<{ job: string }>("SELECT job FROM jobs WHERE id = ?", id);
    return row === undefined ? null : (readJob(JSON.parse(row.job)) ?? null);
  }

  /** Deletes a parked job once it is answered or dead-lettered. */
  forgetJob(id: string): void {
    this.sql.run("DELETE FROM jobs WHERE id = ?", id);
  }

  /**
   * Runs a replayed dead letter's job again (see {@link ConversationLane.restore}): its kept
   * replies are posted again, the brain is asked only when it had not answered. `markedAt` is
   * when the replay was asked for, which makes a repeated hand-back a duplicate.
   */
  async replay(job: Job, markedAt: number): Promise<HandOver> {
    const result = this.lane.restore(job, Date.now(), markedAt);
    await this.touch();
    return result;
  }

  /** Runs the due jobs of the lane, then expires the conversation if it is idle and old enough. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.sql.usage.alarmRuns += 1;
    if (this.running) return;
    this.running = true;
    try {
      const env = objectEnvironment(this.env);
      const delivery = await deliveryFor(env);
      const logger = delivery.ok ? delivery.parts.logger : delivery.logger;
      if (!this.oldLettersMoved) await this.moveOldDeadLetters(env, logger);
      await runDueJobs({
        lane: this.lane,
        consumer: await this.consumerFor(env),
        deadLetters: env.DEAD_LETTERS,
        park: (job) => this.park(job),
        replayHint: workersReplayHint(delivery.ok ? delivery.parts.config : undefined),
        logger,
        now: () => Date.now(),
      });
      const expiresAt = this.expiresAt();
      if (this.lane.size() === 0) {
        if (expiresAt !== undefined && expiresAt <= Date.now()) await this.expire();
        else if (Date.now() - this.prunedAt >= TOUCH_EVERY_MS) {
          this.prunedAt = Date.now();
          this.lane.prune(this.prunedAt);
        }
      }
    } finally {
      this.running = false;
      await this.schedule();
    }
  }

  /** The consumer for `env`, built once per instance and environment; undefined when unusable. */
  private consumerFor(env: WorkerEnv): Promise<Consumer | undefined> {
    if (this.consumer?.env !== env) {
      const built = deliveryFor(env).then((delivery) => {
        if (!delivery.ok) return undefined;
        const memory = { store: this.memory.asStore(), sequences: this.memory.asCounter() };
        return createObjectConsumer(delivery.parts, memory).catch((error: unknown) => {
          delivery.parts.logger.error(`cannot answer messages: ${errorMessage(error)}`);
          return undefined;
        });
      });
      this.consumer = { env, built };
    }
    return this.consumer.built;
  }

  private park(job: Job): void {
    this.sql.run("INSERT OR REPLACE INTO jobs (id, job) VALUES (?, ?)", job.message.id, JSON.stringify(job));
  }

  /** Notes activity (at most hourly, see {@link TOUCH_EVERY_MS}) and sets the alarm for what is next. */
  private async touch(): Promise<void> {
    const now = Date.now();
    const touched = this.touchedAt();
    if (touched === undefined || now - touched >= TOUCH_EVERY_MS) {
      this.sql.run(
        "INSERT INTO counters (name, value) VALUES ('touched_at', ?1) ON CONFLICT (name) DO UPDATE SET value = ?1",
        now,
      );
    }
    await this.schedule();
  }

  /**
   * Sets the one alarm: the head job's next run while jobs wait, else the expiry. A running
   * lane sets it when it stops, from what it left.
   */
  private async schedule(): Promise<void> {
    if (this.running) return;
    const at = this.lane.nextRunAt() ?? this.expiresAt();
    if (at === undefined) return;
    this.alarmAt ??= await this.ctx.storage.getAlarm();
    if (this.alarmAt === at) return;
    this.alarmAt = at;
    this.sql.usage.alarmsSet += 1;
    await this.ctx.storage.setAlarm(at);
  }

  private touchedAt(): number | undefined {
    return this.sql.first<{ value: number }>("SELECT value FROM counters WHERE name = 'touched_at'")?.value;
  }

  private expiresAt(): number | undefined {
    const touched = this.touchedAt();
    return touched === undefined ? undefined : touched + CONVERSATION_TTL_MS;
  }

  /**
   * Version 0.1.0 kept a conversation's dead letters in its own object, where the admin API
   * cannot list them; they move to the dead-letter store the first time the object runs. One
   * that cannot be moved now stays (logged), and is tried again when the object wakes again;
   * the lane runs meanwhile.
   */
  private async moveOldDeadLetters(env: WorkerEnv, logger: Logger): Promise<void> {
    const rows = this.sql.all<{ id: string; letter: string }>("SELECT id, letter FROM dead_letters");
    const store = env.DEAD_LETTER_STORE.get(env.DEAD_LETTER_STORE.idFromName(DEAD_LETTER_STORE_NAME));
    let left = 0;
    for (const row of rows) {
      try {
        const read = readDeadLetterBody({ deadLetter: JSON.parse(row.letter) as unknown });
        if (read !== undefined && "deadLetter" in read && !("stored" in read.deadLetter.job)) {
          await store.keep({ ...read.deadLetter, job: read.deadLetter.job });
        } else {
          logger.error("a dead letter kept by version 0.1.0 cannot be read; it is dropped", {
            message_id: row.id,
            ...(logger.enabled("debug") ? { letter: row.letter } : {}),
          });
        }
        this.sql.run("DELETE FROM dead_letters WHERE id = ?", row.id);
      } catch (error) {
        left += 1;
        logger.warn("a dead letter kept by version 0.1.0 cannot be moved to the dead-letter store yet", {
          message_id: row.id,
          error: errorMessage(error),
        });
      }
    }
    this.oldLettersMoved = left === 0;
  }

  /**
   * Nothing touched the conversation for the TTL and nothing waits, so it goes, except dead
   * letters an earlier version kept here that could not be moved yet (and the sequence
   * counter, so numbering stays unique beside them).
   */
  private async expire(): Promise<void> {
    const kept = this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM dead_letters")?.n ?? 0;
    if (kept > 0) {
      for (const table of ["turns", "jobs", "answered"]) this.sql.run(`DELETE FROM ${table}`);
      this.sql.run("DELETE FROM counters WHERE name <> 'sequence'");
      return;
    }
    // deleteAll drops the tables and the alarm too, and this instance may still be called.
    await this.ctx.storage.deleteAll();
    this.alarmAt = null;
    createConversationTables(this.sql);
  }
}
