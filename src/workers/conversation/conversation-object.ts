import { DurableObject } from "cloudflare:workers";
import type { ConversationTurn } from "../../core/conversation/conversation-store.js";
import type { Job } from "../../core/lifecycle/job.js";
import { type Logger, silentLogger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { noopMetrics } from "../../core/metrics/noop-metrics.js";
import { partsFor } from "../environment-parts.js";
import { MeteredSql, type StorageUsage } from "../metered-sql.js";
import type { InboundBody } from "../queue-body.js";
import { ReceiverLink } from "../receiver/receiver-link.js";
import type { WorkerEnv } from "../worker-env.js";
import { ConversationCounters } from "./conversation-counters.js";
import { ConversationExpiry } from "./conversation-expiry.js";
import { ConversationLane, type HandOver, ORDER_HOLD_MS } from "./conversation-lane.js";
import { ConversationMemory } from "./conversation-memory.js";
import { createConversationTables } from "./conversation-tables.js";
import { createDurableLaneStore, type DurableLaneStore } from "./durable-lane-store.js";
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
 * wait (a retry, a head held for order); an idle conversation keeps whatever alarm it has for
 * its expiry (`conversation-expiry.ts`). Jobs run in the hand-over that brought them
 * ({@link enqueue}) or in `alarm()`, and an in-memory flag keeps a second run (an alarm during
 * a hand-over, a test running it by hand, the platform's at-least-once retry) from running the
 * lane at the same time: calls that arrive while a job awaits its brain or receiver only add
 * to the lane, and the running loop takes what they added. An instance is unique and its
 * memory is lost with it, so the flag needs no storage.
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
  private readonly store: DurableLaneStore;
  /** What the lane store reports through during a run: the Worker's parts, or their stand-ins. */
  private reporting: { readonly logger: Logger; readonly metrics: Metrics } | undefined;
  private running = false;
  /** A receiver wake-up came while the lane ran: the head runs again once the run ends. */
  private wokenDuringRun = false;
  /** The alarm as set, null for none, undefined until read: `setAlarm` is billed, so it is not repeated. */
  private alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new MeteredSql(ctx.storage.sql);
    this.memory = new ConversationMemory(this.sql);
    this.parked = new ParkedJobs(this.sql);
    this.lane = new ConversationLane(this.sql, this.parked);
    this.counters = new ConversationCounters(this.sql, () => this.lane.lastSequence());
    this.oldLetters = new OldDeadLetters(this.sql);
    this.expiry = new ConversationExpiry({
      counters: this.counters,
      memory: this.memory,
      parked: this.parked,
      lane: this.lane,
      oldLetters: this.oldLetters,
    });
    this.consumer = new ObjectConsumer(() => ({ store: this.memory.asStore() }));
    this.receiver = new ReceiverLink(
      () => this.environment().RECEIVERS,
      () => this.reporting?.logger ?? silentLogger,
    );
    this.store = createDurableLaneStore({
      lane: this.lane,
      counters: this.counters,
      memory: this.memory,
      parked: this.parked,
      deadLetters: () => this.environment().DEAD_LETTERS,
      logger: () => this.reporting?.logger ?? silentLogger,
      metrics: () => this.reporting?.metrics ?? noopMetrics,
      now: () => Date.now(),
    });
    createConversationTables(this.sql);
  }

  /** What this instance did that is billed; read by the cost test. */
  get usage(): StorageUsage {
    return { ...this.sql.usage };
  }

  /**
   * Takes the inbound queue's messages of this conversation, idempotent by message id, runs
   * the lane's due jobs in this request (waiting here for a head due within
   * {@link ORDER_HOLD_MS}, rather than setting an alarm, which is a billed write), and resolves
   * with one result per body: the consumer acks them then. Had the object stopped mid-run, this
   * call fails, the queue hands the messages over again, and they are duplicates by then whose
   * hand-over runs the lane again, so a stored job never waits without an alarm or a run.
   */
  async enqueue(bodies: readonly InboundBody[]): Promise<HandOver[]> {
    const results = bodies.map((body) => this.lane.add(body));
    this.expiry.touch(Date.now());
    await this.runLane(ORDER_HOLD_MS);
    return results;
  }

  /** How long a hand-over keeps starting jobs; the alarm runs what is left. */
  static readonly HAND_OVER_RUN_MS = 15_000;

  /** The last `limit` turns (at most `MAX_TURNS`, 100), oldest first. */
  history(limit: number): ConversationTurn[] {
    return this.memory.history(limit);
  }

  /** Appends turns in order and drops all but the last `MAX_TURNS`. */
  async append(turns: readonly ConversationTurn[]): Promise<void> {
    this.memory.append(turns);
    await this.touch();
  }

  /** Another instance takes the lane over: tickets of this one are refused (the lane store contract). */
  takeOver(): number {
    return this.store.takeOver();
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
   * it is up again, or (`asProbe`) this conversation's next POST is to be its probe. Answers
   * whether anything of the conversation waits (false: its job left the lane meanwhile, and a
   * probe goes to another conversation). A wake-up that comes while the lane runs is kept for
   * when the run ends, so that the run's own settlement (a hold) cannot undo it.
   */
  async receiverWake(channel: string, asProbe: boolean): Promise<boolean> {
    const head = this.lane.head();
    if (head?.job === undefined) return false;
    if (asProbe) this.receiver.grantProbe();
    else ReceiverLink.up(channel);
    if (this.running) {
      this.wokenDuringRun = true;
      return true;
    }
    this.lane.postpone(head.id, Date.now());
    await this.schedule();
    return true;
  }

  /**
   * Moves dead letters an earlier version kept here, runs the due jobs of the lane, then
   * expires the conversation if it is idle and old enough.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.sql.usage.alarmRuns += 1;
    await this.runLane();
  }

  /**
   * Runs the lane (see {@link alarm}) unless it runs already. With `waitUpTo` (a hand-over), it
   * runs only when the head is due within that many ms, after waiting for it here.
   */
  private async runLane(waitUpTo?: number): Promise<void> {
    const startUntil = waitUpTo === undefined ? undefined : Date.now() + ConversationObject.HAND_OVER_RUN_MS;
    if (this.running) return;
    this.running = true;
    try {
      if (waitUpTo !== undefined) {
        const wait = (this.lane.nextRunAt() ?? Number.POSITIVE_INFINITY) - Date.now();
        if (wait > waitUpTo) return;
        // Other calls are delivered meanwhile; their jobs join the lane and this run takes them.
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      const env = this.environment();
      const built = await partsFor(env);
      const logger = built.ok ? built.parts.logger : built.logger;
      await this.oldLetters.moveOnce(env.DEAD_LETTER_STORE, logger);
      this.reporting = { logger, metrics: built.ok ? built.parts.metrics : noopMetrics };
      await runDueJobs({
        lane: this.lane,
        store: this.store,
        consumer: await this.consumer.for(env),
        replayHint: workersReplayHint(built.ok ? built.parts.config : undefined),
        logger,
        receiver: this.receiver,
        now: () => Date.now(),
        startUntil,
      });
      if (this.wokenDuringRun) {
        this.wokenDuringRun = false;
        const head = this.lane.head();
        if (head !== undefined && head.nextAt > Date.now()) this.lane.postpone(head.id, Date.now());
      }
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
   * Sets the one alarm: the head job's next run while jobs wait. An idle conversation needs an
   * alarm for its expiry, but any alarm will do: one already set is kept (it runs the lane,
   * finds the conversation not expired yet, and the alarm is set again then), so an answered
   * message costs no alarm. A running lane sets it when it stops, from what it left.
   */
  private async schedule(): Promise<void> {
    if (this.running) return;
    const next = this.lane.nextRunAt();
    this.alarmAt ??= await this.ctx.storage.getAlarm();
    const at = next ?? (this.alarmAt === null ? this.expiry.expiresAt() : undefined);
    if (at === undefined || this.alarmAt === at) return;
    this.alarmAt = at;
    this.sql.usage.alarmsSet += 1;
    await this.ctx.storage.setAlarm(at);
  }

  /** The expiry's end: everything goes, the alarm too; the tables come back, since this instance may still be called. */
  private async deleteStorage(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.alarmAt = null;
    this.counters.forget();
    createConversationTables(this.sql);
  }
}
