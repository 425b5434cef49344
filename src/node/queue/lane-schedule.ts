import { conversationKey } from "../../core/conversation/conversation-store.js";
import { ConversationLanes } from "../../core/lifecycle/conversation-lanes.js";
import type { Job } from "../../core/lifecycle/job.js";
import { MAX_TIMER_MS } from "../../core/timer-limit.js";

/**
 * The job queue's bookkeeping of its lanes: which conversation's head may run now (in the
 * order they became ready, so lanes take turns), the retry timers of heads that wait, how
 * many accepted jobs are unfinished, and who waits for none to be. It decides nothing: the
 * queue tells it what a settlement said.
 */
export class LaneSchedule {
  private readonly lanes = new ConversationLanes<Job>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Lanes whose head job may run now; a Set keeps insertion order. */
  private readonly ready = new Set<string>();
  private idleWaiters: (() => void)[] = [];
  /** Ids of the jobs in the lanes: a job given again (replicas loading a conversation) is not added twice. */
  private readonly ids = new Set<string>();
  /**
   * Ids of the last jobs that finished here, whose delete may not have committed: a replica
   * that loads their conversation from the store meanwhile must not run them again.
   */
  private readonly finished = new Map<string, string>();
  /** Jobs in the lanes (waiting, running or waiting to retry). */
  private unfinished = 0;
  /** Accepted jobs whose store write has not committed yet: they count, and a drain waits for them. */
  private committing = 0;
  private stopped = false;

  /** @param wake called when a postponed head becomes due. */
  constructor(
    private readonly wake: () => void,
    private readonly now: () => number,
  ) {}

  /** Accepted jobs not yet finished, those still committing included. */
  get size(): number {
    return this.unfinished + this.committing;
  }

  /** Counts a job accepted while its store write commits (see {@link add} and {@link release}). */
  reserve(): void {
    this.committing += 1;
  }

  /** Forgets a reserved job whose store write failed: it was never accepted. */
  release(): void {
    this.committing -= 1;
    this.wakeIdle();
  }

  /** True once {@link stop} ran: nothing starts any more. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * Adds a job at the end of its conversation's lane; `reserved` when {@link reserve} counted it.
   * False, adding nothing, for a job that is in a lane already or has just finished here.
   */
  add(job: Job, reserved = false): boolean {
    if (reserved) this.committing -= 1;
    const id = job.message.id;
    if (this.ids.has(id) || this.finished.has(id)) {
      if (reserved) this.wakeIdle();
      return false;
    }
    this.ids.add(id);
    this.unfinished += 1;
    const key = keyOf(job);
    if (this.lanes.push(key, job)) this.ready.add(key);
    return true;
  }

  /**
   * The heads that may start now, in turn; each one yielded is no longer ready (the caller
   * starts it). `mayStart` false skips a head (of lane `key`), which stays ready.
   */
  *startable(mayStart: (job: Job, key: string) => boolean): Generator<{ key: string; job: Job }> {
    for (const key of this.ready) {
      const job = this.lanes.head(key);
      if (job === undefined) {
        this.ready.delete(key);
        continue;
      }
      if (!mayStart(job, key)) continue;
      this.ready.delete(key);
      // Woken while its head ran, the lane may hold that run's timer: it starts now instead.
      this.clearTimer(key);
      yield { key, job };
    }
  }

  /** Forgets a finished id: a dead letter's, once its burial committed, so that its replay runs. */
  forgetFinished(id: string): void {
    this.finished.delete(id);
  }

  /**
   * Drops every job that is not running: this replica no longer runs their conversations (its
   * lease ran out, and another replica may have taken them). A running head stays until it
   * settles. Returns how many jobs were dropped; they stay stored for their conversation's runner.
   */
  forsake(): number {
    let dropped = 0;
    for (const [key, lane] of [...this.lanes.entries()]) {
      const running = !this.ready.has(key) && !this.timers.has(key);
      clearTimeout(this.timers.get(key));
      this.timers.delete(key);
      this.ready.delete(key);
      const kept = running ? lane.slice(0, 1) : [];
      for (const job of lane.slice(kept.length)) this.ids.delete(job.message.id);
      dropped += lane.length - kept.length;
      this.lanes.keep(key, kept);
    }
    this.unfinished -= dropped;
    this.wakeIdle();
    return dropped;
  }

  /**
   * Drops lane `key` whole, running head included: another runner claimed the conversation, so
   * nothing of it runs here any more (a run under way finds its job gone when it settles).
   * Returns how many jobs were dropped; they stay stored for the conversation's runner. With
   * `forgetFinished`, the lane's jobs that finished here are forgotten too: their deletes may not
   * be made any more, so a read of the lane must run them again from what is stored.
   */
  drop(key: string, forgetFinished = false): number {
    if (forgetFinished) for (const [id, of] of this.finished) if (of === key) this.finished.delete(id);
    const lane = this.lanes.lane(key);
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    this.ready.delete(key);
    for (const job of lane) this.ids.delete(job.message.id);
    this.unfinished -= lane.length;
    this.lanes.keep(key, []);
    this.wakeIdle();
    return lane.length;
  }

  /** True while the job `id` is in a lane, or finished lately (see {@link add}). */
  knows(id: string): boolean {
    return this.ids.has(id) || this.finished.has(id);
  }

  /** The head of a lane (the job running or waiting there). */
  head(key: string): Job | undefined {
    return this.lanes.head(key);
  }

  /**
   * Replaces a running head with its progress. A run whose lane was dropped and read again
   * meanwhile (see `queue-runner.ts`) changes nothing here: the lane holds other copies now.
   */
  progress(key: string, job: Job): void {
    if (this.lanes.head(key)?.message.id === job.message.id) this.lanes.replaceHead(key, job);
  }

  /**
   * The id of the job just ahead of job `id` in lane `key`: null when it is the head, undefined
   * when the lane does not hold it (it runs elsewhere, or has not joined yet).
   */
  ahead(key: string, id: string): string | null | undefined {
    const lane = this.lanes.lane(key);
    const index = lane.findIndex((job) => job.message.id === id);
    if (index < 0) return undefined;
    return index === 0 ? null : (lane[index - 1]?.message.id ?? null);
  }

  /** True while job `id` runs at the head of lane `key`: neither ready to start nor waiting for a timer. */
  isRunning(key: string, id: string): boolean {
    return this.lanes.head(key)?.message.id === id && !this.ready.has(key) && !this.timers.has(key);
  }

  /** True while `job` is the head of its lane (running, or waiting to retry). */
  isHead(job: Job): boolean {
    return this.lanes.head(keyOf(job))?.message.id === job.message.id;
  }

  /**
   * The job leaves its lane (finished or dead); the next one of the lane becomes ready. Its id
   * is remembered as finished (see {@link add}); a dead one's until {@link forgetFinished}, since
   * a replayed dead letter comes back with its id.
   */
  leave(job: Job): void {
    const key = keyOf(job);
    const id = job.message.id;
    this.ids.delete(id);
    this.finishedHere(job);
    this.unfinished -= 1;
    if (this.lanes.shift(key) !== undefined) this.ready.add(key);
    this.wakeIdle();
  }

  /**
   * Remembers `job` as finished here (see {@link add}), though it is not in a lane: a run of it
   * that ended after its lane was dropped.
   */
  finishedHere(job: Job): void {
    this.finished.set(job.message.id, keyOf(job));
    if (this.finished.size > FINISHED_KEPT) {
      const oldest = this.finished.keys().next();
      if (oldest.done !== true) this.finished.delete(oldest.value);
    }
  }

  /** The job stays first in its lane and becomes ready at `dueAt`. */
  postpone(job: Job, dueAt: number): void {
    const key = keyOf(job);
    this.lanes.replaceHead(key, job);
    if (this.stopped) return;
    this.clearTimer(key);
    const timer = setTimeout(
      () => {
        this.timers.delete(key);
        this.ready.add(key);
        this.wake();
      },
      // A timer longer than 2^31 - 1 ms fires at once: a hold until a far max age wakes early
      // instead, and is held again.
      Math.min(MAX_TIMER_MS, Math.max(0, dueAt - this.now())),
    );
    this.timers.set(key, timer);
  }

  /**
   * A job just added that heads its lane waits until `dueAt` (a stored retry's time) instead of
   * starting now; one not at the head, or already due, is left as it is.
   */
  defer(job: Job, dueAt: number): void {
    if (!this.isHead(job) || dueAt <= this.now()) return;
    this.ready.delete(keyOf(job));
    this.postpone(job, dueAt);
  }

  /**
   * Makes the lanes `keys` ready now, in this order, though their heads were postponed or held
   * (their receiver is up again, or one of them is to probe it).
   */
  wakeNow(keys: readonly string[]): void {
    if (this.stopped) return;
    for (const key of keys) {
      if (this.lanes.head(key) === undefined) continue;
      this.clearTimer(key);
      this.ready.add(key);
    }
    this.wake();
  }

  /** Forgets the lane's timer, if it has one: it is ready now, or set again. */
  private clearTimer(key: string): void {
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }

  /** Epoch ms at which the oldest unfinished job was accepted: only lane heads are looked at. */
  oldestAcceptedAt(): number | undefined {
    let oldest: number | undefined;
    for (const lane of this.lanes.all()) {
      const at = lane[0]?.message.receivedAt;
      if (at !== undefined && (oldest === undefined || at < oldest)) oldest = at;
    }
    return oldest;
  }

  /** Resolves once no job is unfinished and none is committing. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private wakeIdle(): void {
    if (this.size !== 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Stops the retry timers; returns the ids of the jobs still in the lanes. */
  stop(): string[] {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    const left: string[] = [];
    for (const lane of this.lanes.all()) for (const job of lane) left.push(job.message.id);
    return left;
  }
}

/** Finished ids remembered: far more than finish while one delete commits. */
const FINISHED_KEPT = 4_096;

function keyOf(job: Job): string {
  return conversationKey(job.message.channel, job.message.message.conversationId);
}
