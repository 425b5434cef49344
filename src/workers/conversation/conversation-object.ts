import { DurableObject } from "cloudflare:workers";
import type { ConversationTurn } from "../../core/conversation/conversation-store.js";
import { noopMetrics } from "../../core/metrics/noop-metrics.js";
import type { Job } from "../../core/sequencer/job.js";
import { partsFor } from "../environment-parts.js";
import { MeteredSql, type StorageUsage } from "../metered-sql.js";
import type { InboundBody } from "../queue-body.js";
import { ReceiverLink } from "../receiver/receiver-link.js";
import type { WorkerEnv } from "../worker-env.js";
import { ConversationCounters } from "./conversation-counters.js";
import { ConversationExpiry } from "./conversation-expiry.js";
import { ConversationLane, type HandOver } from "./conversation-lane.js";
import { ConversationMemory } from "./conversation-memory.js";
import { createConversationTables } from "./conversation-tables.js";
import { runDueJobs } from "./lane-runner.js";
import { ObjectConsumer } from "./object-consumer.js";
import { OldDeadLetters } from "./old-dead-letters.js";
import { ParkedJobs } from "./parked-jobs.js";
import { workersReplayHint } from "./replay-hint.js";

/**
 * One conversation of one channel, addressed by `idFromName(conversationKey(...))`: the
 * sequencer of its replies. The inbound consumer hands it each message ({@link enqueue});
 * it keeps them in SQLite in acceptance order and runs the head job with the core consumer
 * (brain, then replies), one job at a time. A retry sets the alarm to the policy's delay, to
 * the millisecond, and later jobs wait behind it; a dead letter goes to the dead-letter
 * queue and the next job runs. It also holds the conversation's memory, its reply sequence
 * counter and parked jobs; its dead letters go to the {@link DeadLetterObject}.
 *
 * The object wires its parts, one per table (`conversation-tables.ts` lists them), and holds
 * the alarm. One alarm serves everything: it is set to the head job's next run while jobs
 * wait, else to the expiry (`conversation-expiry.ts`). Jobs only run in `alarm()`, and an
 * in-memory flag keeps a second alarm (a test running it by hand, the platform's
 * at-least-once retry) from running the lane at the same time: calls that arrive while a job
 * awaits its brain or receiver only add to the lane, and the running loop takes what they
 * added. An instance is unique and its memory is lost with it, so the flag needs no storage.
 */
export class ConversationObject extends DurableObject<WorkerEnv> {
  private readonly sql: MeteredSql;
  private readonly memory: ConversationMemory;
  private readonly counters: ConversationCounters;
  private readonly parked: ParkedJobs;
  private readonly lane: ConversationLane;
  private readonly oldLetters: OldDeadLetters;
  private readonly expiry: ConversationExpiry;
  private readonly consumer: ObjectConsumer;
  private readonly receiver: ReceiverLink;
  private running = false;
  /** The alarm as set, null for none, undefined until read: `setAlarm` is billed, so it is not repeated. */
  private alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new MeteredSql(ctx.storage.sql);
    this.memory = new ConversationMemory(this.sql);
    this.counters = new ConversationCounters(this.sql);
    this.parked = new ParkedJobs(this.sql);
    this.lane = new ConversationLane(this.sql, this.parked);
    this.oldLetters = new OldDeadLetters(this.sql);
    this.expiry = new ConversationExpiry({
      counters: this.counters,
      memory: this.memory,
      parked: this.parked,
      lane: this.lane,
      oldLetters: this.oldLetters,
    });
    this.consumer = new ObjectConsumer(() => ({
      store: this.memory.asStore(),
      sequences: this.counters.asSequenceCounter(),
    }));
    this.receiver = new ReceiverLink(env.RECEIVERS);
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

  /** The last `limit` turns (at most `MAX_TURNS`, 100), oldest first. */
  history(limit: number): ConversationTurn[] {
    return this.memory.history(limit);
  }

  /** Appends turns in order and drops all but the last `MAX_TURNS`. */
  async append(turns: readonly ConversationTurn[]): Promise<void> {
    this.memory.append(turns);
    await this.touch();
  }

  /** Reserves `count` reply sequence numbers (1, 2, 3… per conversation) and returns the first. */
  async reserveSequence(count: number): Promise<number> {
    const first = this.counters.reserveSequence(count);
    await this.touch();
    return first;
  }

  /** Parks a job (replacing an earlier state of it) until {@link forgetJob} or its hand-over. */
  async storeJob(job: Job): Promise<void> {
    this.parked.park(job);
    await this.touch();
  }

  /** A parked job, or null when there is none under that message id (or it cannot be read). */
  storedJob(id: string): Job | null {
    return this.parked.find(id)?.job ?? null;
  }

  /** Deletes a parked job once it is answered or dead-lettered. */
  forgetJob(id: string): void {
    this.parked.forget(id);
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

  /**
   * The channel's receiver object wakes this conversation, whose replies wait for the receiver:
   * it is up again, or (`asProbe`) this conversation's next POST is to be its probe.
   */
  async receiverWake(channel: string, asProbe: boolean): Promise<void> {
    if (asProbe) this.receiver.grantProbe();
    else ReceiverLink.up(channel);
    const head = this.lane.head();
    if (head === undefined) return;
    this.lane.postpone(head.id, Date.now());
    await this.schedule();
  }

  /**
   * Moves dead letters an earlier version kept here, runs the due jobs of the lane, then
   * expires the conversation if it is idle and old enough.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.sql.usage.alarmRuns += 1;
    if (this.running) return;
    this.running = true;
    try {
      const env = this.environment();
      const built = await partsFor(env);
      const logger = built.ok ? built.parts.logger : built.logger;
      await this.oldLetters.moveOnce(env.DEAD_LETTER_STORE, logger);
      await runDueJobs({
        lane: this.lane,
        consumer: await this.consumer.for(env),
        deadLetters: env.DEAD_LETTERS,
        park: (job) => this.parked.park(job),
        replayHint: workersReplayHint(built.ok ? built.parts.config : undefined),
        logger,
        metrics: built.ok ? built.parts.metrics : noopMetrics,
        receiver: this.receiver,
        now: () => Date.now(),
      });
      await this.expiry.afterRun(() => this.deleteStorage());
    } finally {
      this.running = false;
      await this.schedule();
    }
  }

  /**
   * The environment the object answers from: its own, which is the Worker's (one deployment,
   * one set of bindings, variables and secrets). A method, so that a harness that runs the
   * object under another environment (the tests' entry, `test/workers/support/`) can say so.
   */
  protected environment(): WorkerEnv {
    return this.env;
  }

  /** Notes activity (at most hourly) and sets the alarm for what is next. */
  private async touch(): Promise<void> {
    this.expiry.touch(Date.now());
    await this.schedule();
  }

  /**
   * Sets the one alarm: the head job's next run while jobs wait, else the expiry. A running
   * lane sets it when it stops, from what it left.
   */
  private async schedule(): Promise<void> {
    if (this.running) return;
    const at = this.lane.nextRunAt() ?? this.expiry.expiresAt();
    if (at === undefined) return;
    this.alarmAt ??= await this.ctx.storage.getAlarm();
    if (this.alarmAt === at) return;
    this.alarmAt = at;
    this.sql.usage.alarmsSet += 1;
    await this.ctx.storage.setAlarm(at);
  }

  /** The expiry's end: everything goes, the alarm too; the tables come back, since this instance may still be called. */
  private async deleteStorage(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.alarmAt = null;
    createConversationTables(this.sql);
  }
}
