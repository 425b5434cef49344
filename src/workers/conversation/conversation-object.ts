import { DurableObject } from "cloudflare:workers";
import { errorMessage } from "../../core/channel-error.js";
import type { ConversationTurn } from "../../core/conversation/conversation-store.js";
import type { Job } from "../../core/lifecycle/job.js";
import { type Logger, silentLogger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { noopMetrics } from "../../core/metrics/noop-metrics.js";
import { partsFor } from "../environment-parts.js";
import { MeteredSql, type StorageUsage } from "../metered-sql.js";
import { operatorEventsOf } from "../object-operator-events.js";
import type { InboundBody } from "../queue-body.js";
import { ReceiverLink } from "../receiver/receiver-link.js";
import { timelineFor } from "../timeline/workers-timeline.js";
import type { WorkerEnv } from "../worker-env.js";
import { AnsweredIds } from "./answered-ids.js";
import { ConversationAlarm } from "./conversation-alarm.js";
import { ConversationCounters } from "./conversation-counters.js";
import { ConversationExpiry } from "./conversation-expiry.js";
import { ConversationLane, type HandOver, ORDER_HOLD_MS } from "./conversation-lane.js";
import { ConversationMemory } from "./conversation-memory.js";
import { createConversationTables } from "./conversation-tables.js";
import { createDurableLaneStore, type DurableLaneStore } from "./durable-lane-store.js";
import { HAND_OVER_WAIT_MS } from "./lane-head.js";
import { runDueJobs } from "./lane-runner.js";
import { ObjectConsumer } from "./object-consumer.js";
import { OldDeadLetters } from "./old-dead-letters.js";
import { ParkedJobs } from "./parked-jobs.js";
import { workersReplayHint } from "./replay-hint.js";
import { retentionHoursOf } from "./retention-hours.js";
import { SingleRun } from "./single-run.js";
import { PENDING, sleep, within } from "./within.js";

/**
 * One conversation of one channel, addressed by `idFromName(conversationKey(...))`: the sequencer of its replies. The
 * inbound consumer hands it each message ({@link enqueue}); it keeps them in SQLite in acceptance order and runs the
 * head job with the core consumer (brain, then replies), one job at a time. A retry sets the alarm to the policy's
 * delay, to the millisecond, and later jobs wait behind it; a dead letter goes to the dead-letter queue and the next
 * job runs. It also holds the conversation's memory, its reply sequence counter and parked jobs; its dead letters go
 * to the {@link DeadLetterObject}.
 *
 * It wires its parts, one per table (`conversation-tables.ts`), and holds the one alarm: the head job's next run
 * while jobs wait, else its expiry's (`conversation-expiry.ts`). Jobs start in their hand-over ({@link enqueue}) or
 * in `alarm()`, one run at a time (an instance is unique); calls meanwhile only add to the lane, which the running
 * loop takes. A hand-over waits for the run at most {@link HAND_OVER_WAIT_MS}; the rest goes on under an alarm set to
 * fire at once, so a slow or hanging receiver or brain holds back only its conversation, never the inbound consumer.
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
  /** The lane's run: one at a time. */
  private readonly run = new SingleRun(() => this.runLane());
  /** An alarm invocation is under way: it waits for the run, so a hand-over needs no alarm of its own. */
  private onAlarm = false;
  /** A receiver wake-up came while the lane ran: the head runs again once the run ends. */
  private wokenDuringRun = false;
  private readonly alarms: ConversationAlarm;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new MeteredSql(ctx.storage.sql);
    this.alarms = new ConversationAlarm(ctx.storage, this.sql.usage);
    this.memory = new ConversationMemory(this.sql, () => retentionHoursOf(this.environment()));
    this.parked = new ParkedJobs(this.sql);
    this.lane = new ConversationLane(this.sql, this.parked, new AnsweredIds(this.sql), this.waits().orderHoldMs);
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
    this.lane.adoptOpen();
  }

  /** What this instance did that is billed; read by the cost test. */
  get usage(): StorageUsage {
    return { ...this.sql.usage };
  }

  /**
   * Takes the inbound queue's messages of this conversation, idempotent by message id, and
   * resolves with one result per body once they are stored: the consumer acks them then. A head
   * due within {@link ORDER_HOLD_MS} is waited for here (an alarm would be a billed write), then
   * the run it starts for up to {@link HAND_OVER_WAIT_MS} (`busy`, from a full batch: not at all);
   * what outlasts that goes on under the alarm. Had the object stopped before answering, the
   * queue hands the messages over again.
   */
  async enqueue(bodies: readonly InboundBody[], busy = false): Promise<HandOver[]> {
    // Joining a run under way, or from a full batch, the messages are stored and not waited for.
    const joining = this.run.underWay !== undefined;
    const waits = !joining && !busy;
    // Before the messages are taken: should it fail, none is held in memory only.
    this.expiry.touch(Date.now());
    // A lone message to an idle lane is stored only if it is not answered before this returns.
    const results = bodies.map((body) => this.lane.add(body, bodies.length === 1 && waits));
    if (!joining) {
      const wait = (this.lane.nextRunAt() ?? Number.POSITIVE_INFINITY) - Date.now();
      // Other calls are delivered meanwhile; their jobs join the lane and the run takes them.
      if (wait > 0 && wait <= this.lane.orderHoldMs) await sleep(wait);
    }
    const run = joining ? undefined : this.run.start();
    const failure = run === undefined || !waits ? PENDING : await within(run, this.waits().handOverMs);
    this.lane.secure();
    if (failure === PENDING) {
      if (!this.onAlarm) await this.alarms.byNow(Date.now());
    } else if (failure !== undefined) {
      // Stored, they go on under the alarm the run's end set; thrown, the queue's retries would end
      // as dead letters of messages this lane still answers (a replay would answer them twice).
      const logger = this.reporting?.logger ?? silentLogger;
      logger.warn("the conversation's run failed; it goes on under its alarm", { error: errorMessage(failure) });
    }
    return results;
  }

  /** {@link HAND_OVER_WAIT_MS} and {@link ORDER_HOLD_MS}; a method, so that a test harness can wait otherwise. */
  protected waits(): { readonly handOverMs: number; readonly orderHoldMs: number } {
    return { handOverMs: HAND_OVER_WAIT_MS, orderHoldMs: ORDER_HOLD_MS };
  }

  /** The last `limit` turns within the retention (at most `MAX_TURNS`), oldest first. */
  history(limit: number): ConversationTurn[] {
    return this.memory.history(limit);
  }

  /** Appends turns in order, keeping the last `MAX_TURNS` within the retention. */
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
   * it is up again, or (`asProbe`, until `probeUntil`) its next POST is to be the probe. Answers
   * whether anything of it waits (false: its job left the lane, and a probe goes elsewhere). A
   * wake-up while the lane runs is kept for when the run ends, so that the run's own settlement
   * (a hold) cannot undo it.
   */
  async receiverWake(channel: string, asProbe: boolean, probeUntil?: number): Promise<boolean> {
    const head = this.lane.head();
    if (head?.job === undefined) return false;
    if (asProbe) this.receiver.grantProbe(probeUntil);
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
   * Waits for a run under way (a hand-over's, left to the alarm), then moves dead letters an
   * earlier version kept here, runs the due jobs of the lane, and expires the conversation if
   * it is idle and old enough. A run that failed fails the alarm, which the platform tries again.
   */
  override async alarm(): Promise<void> {
    this.alarms.fired();
    this.onAlarm = true;
    try {
      const left = await this.run.underWay;
      if (left !== undefined) throw left;
      const failure = await this.run.start();
      if (failure !== undefined) throw failure;
    } finally {
      this.onAlarm = false;
    }
  }

  /** Runs the due jobs and writes their timeline (see {@link alarm}); the caller makes sure no other run is under way. */
  private async runLane(): Promise<void> {
    this.running = true;
    let timeline: ReturnType<typeof timelineFor>;
    try {
      const env = this.environment();
      const built = await partsFor(env);
      const logger = built.ok ? built.parts.logger : built.logger;
      await this.oldLetters.moveOnce(env.DEAD_LETTER_STORE, logger);
      this.reporting = { logger, metrics: built.ok ? built.parts.metrics : noopMetrics };
      timeline = built.ok ? timelineFor(env, built.parts) : undefined;
      await runDueJobs({
        lane: this.lane,
        store: this.store,
        consumer: await this.consumer.for(env),
        replayHint: workersReplayHint(built.ok ? built.parts.config : undefined),
        logger,
        receiver: this.receiver,
        now: () => Date.now(),
        timeline,
        operatorEvents: built.ok ? operatorEventsOf(this.ctx, built.parts) : undefined,
      });
      if (this.wokenDuringRun) {
        this.wokenDuringRun = false;
        const head = this.lane.head();
        if (head !== undefined && head.nextAt > Date.now()) this.lane.postpone(head.id, Date.now());
      }
      await this.expiry.afterRun(() => this.deleteStorage());
    } finally {
      await timeline?.flush(); // never throws: what cannot be written is dropped with a warning
      this.running = false;
      await this.schedule();
    }
  }

  /**
   * The environment the object answers from: its own, which is the Worker's (one deployment, one set of bindings,
   * variables and secrets). A method, so that a harness running it under another (`test/workers/support/`) can say so.
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
    const at = next ?? ((await this.alarms.current()) === null ? this.expiry.expiresAt() : undefined);
    if (at !== undefined) await this.alarms.set(at);
  }

  /** The expiry's end: everything goes, the alarm too; the tables come back, since this instance may still be called. */
  private async deleteStorage(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.alarms.forget();
    this.counters.forget();
    createConversationTables(this.sql);
  }
}
