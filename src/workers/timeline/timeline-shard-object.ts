import { DurableObject } from "cloudflare:workers";
import { ACTIVITY_WINDOW_MS } from "../../core/timeline/activity-series.js";
import { timelineIsOn, timelineRetention } from "../../core/timeline/timeline-recorder.js";
import type {
  ActivityCount,
  StoredTimeline,
  TimelinePageQuery,
  TimelinePrune,
  TimelineSummary,
  TimelineWrite,
} from "../../core/timeline/timeline-store.js";
import { sleep } from "../conversation/within.js";
import { partsFor } from "../environment-parts.js";
import { MeteredSql, type StorageUsage } from "../metered-sql.js";
import type { WorkerEnv } from "../worker-env.js";
import { createTimelineTables, TimelineShardTable } from "./timeline-shard-table.js";
import { TIMELINE_SHARDS } from "./timeline-shards.js";

/** How often a shard that holds rows forgets what the retention no longer keeps. */
export const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Rows (and minute counts) a prune deletes per transaction. A large cut (the bound lowered, the
 * window shortened) is many short transactions, with other calls let in between, rather than
 * one that holds the object for the whole cut.
 */
const PRUNE_BATCH = 1_000;

/**
 * Batches one alarm run deletes at most, so that a run stays well within an invocation's CPU
 * time however large the cut; what is left goes at the next run, set at once.
 */
export const PRUNE_BATCHES_PER_RUN = 10;

/**
 * One of the {@link TIMELINE_SHARDS} shards of the message timeline (binding `TIMELINE_SHARDS`):
 * the rows of the messages whose ids hash to it, in its SQLite (`timeline-shard-table.ts`).
 * The Worker and the conversation objects write to it and the admin API reads it through
 * `durable-timeline-store.ts`. It prunes itself on its own alarm, set by the first write it
 * takes while none is set, every {@link PRUNE_EVERY_MS} for as long as it holds anything: the
 * window of `timeline.retention_hours`, and its share of `timeline.max_messages`.
 */
export class TimelineShardObject extends DurableObject<WorkerEnv> {
  private readonly sql: MeteredSql;
  private readonly table: TimelineShardTable;
  /** The alarm is known to be set (by this instance, or found set). */
  private armed = false;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new MeteredSql(ctx.storage.sql);
    createTimelineTables(this.sql);
    this.table = new TimelineShardTable(this.sql);
  }

  /** What this instance did that is billed; read by the cost test. */
  get usage(): StorageUsage {
    return { ...this.sql.usage };
  }

  /**
   * Stores a batch of the timeline's writes (see the store's `write`) in one transaction, and
   * arms the prune. A message whose row has grown past what one value holds keeps the events it
   * has; the others are stored. Returns the ids of those it could not store.
   */
  async write(writes: readonly TimelineWrite[], activity: readonly ActivityCount[]): Promise<string[]> {
    const refused = this.ctx.storage.transactionSync(() => this.table.write(writes, activity));
    await this.arm();
    return refused;
  }

  /** One message's row with its events, oldest first; null when this shard has none. */
  one(id: string): StoredTimeline | null {
    return this.table.one(id);
  }

  /** One page of this shard's rows, newest first. */
  page(query: TimelinePageQuery): TimelineSummary[] {
    return this.table.page(query);
  }

  /** This shard's minute counts from `since` on. */
  activity(since: number): ActivityCount[] {
    return this.table.activity(since);
  }

  /** Forgets what `limits` no longer keep (the store's `prune`, for this shard), batch after batch. */
  async prune(limits: TimelinePrune): Promise<void> {
    await this.pruneBatches(limits, Number.POSITIVE_INFINITY);
  }

  /**
   * Prunes by the retention of the configuration the Worker runs with: the window, and this
   * shard's share of the bound. A timeline turned off forgets everything. Sets the alarm again
   * while anything is left; a configuration that cannot be read prunes nothing this time.
   */
  override async alarm(): Promise<void> {
    this.sql.usage.alarmRuns += 1;
    this.armed = false;
    const built = await partsFor(this.environment());
    if (built.ok) {
      const now = Date.now();
      const retention = timelineRetention(built.parts.config.timeline, true);
      const done = await this.pruneBatches(
        timelineIsOn(retention)
          ? {
              before: now - retention.windowMs,
              keep: Math.ceil(retention.maxMessages / TIMELINE_SHARDS),
              minutesBefore: now - 2 * ACTIVITY_WINDOW_MS,
            }
          : { before: Number.MAX_SAFE_INTEGER, keep: 0, minutesBefore: Number.MAX_SAFE_INTEGER },
        PRUNE_BATCHES_PER_RUN,
      );
      if (!done) {
        // The rest of a large cut: at once, in a run of its own.
        this.sql.usage.alarmsSet += 1;
        await this.ctx.storage.setAlarm(Date.now());
        this.armed = true;
        return;
      }
    }
    if (this.table.holdsAny()) await this.arm();
  }

  /**
   * The environment the object works with: its own, which is the Worker's. A method, so that a
   * harness that runs the object under another environment (the tests' entry) can say so.
   */
  protected environment(): WorkerEnv {
    return this.env;
  }

  /**
   * Prunes by `limits` in at most `batches` transactions of {@link PRUNE_BATCH} rows, letting
   * other calls in between (a timer ends the turn, so each commits on its own); true when
   * nothing is left to prune.
   */
  private async pruneBatches(limits: TimelinePrune, batches: number): Promise<boolean> {
    const bound = this.table.pruneBound(limits);
    for (let batch = 0; batch < batches; batch += 1) {
      const more = this.ctx.storage.transactionSync(() =>
        this.table.pruneBatch(bound, limits.minutesBefore, PRUNE_BATCH),
      );
      if (!more) return true;
      await sleep(0);
    }
    return false;
  }

  /** Sets the prune's alarm unless one is set: once per {@link PRUNE_EVERY_MS} at most. */
  private async arm(): Promise<void> {
    if (this.armed) return;
    if ((await this.ctx.storage.getAlarm()) === null) {
      this.sql.usage.alarmsSet += 1;
      await this.ctx.storage.setAlarm(Date.now() + PRUNE_EVERY_MS);
    }
    this.armed = true;
  }
}
