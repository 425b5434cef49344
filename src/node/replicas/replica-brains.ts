import type { Pool } from "pg";
import type { BrainSharing, SharedLimiters } from "../../core/brain/limits/brain-sharing.js";
import { errorMessage } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";

/** The channel every replica LISTENs on for the pauses the others met. */
export const PAUSES_CHANNEL = "webhook_channel_pauses";

/** A pause as a notification carries it. */
interface PauseNotice {
  readonly from: string;
  readonly target: string;
  readonly until: number;
  readonly status: number;
}

/** A live replica as the sweep reads it: its id and the brain calls it last said it holds. */
export interface LiveReplica {
  readonly id: string;
  /** Calls in flight per limiter, as its last sweep wrote them (none from an older version). */
  readonly calls: Readonly<Record<string, number>>;
}

/** The brain limits of one replica, as a share of the service's. */
export interface ReplicaBrains extends BrainSharing {
  /**
   * The live replicas, in id order, as the sweep reads them: this replica's share follows. One
   * that joined takes no share until every other had the time to see it (two sweeps), and no
   * replica uses the part of its share that calls of others, begun under their older and larger
   * shares, still hold.
   */
  live(replicas: readonly LiveReplica[], sweepMs: number): void;
  /** Writes the calls this replica holds now to its row, for the others' shares; after `live`. */
  publish(): Promise<void>;
  /** A pause notification from another replica (a payload of {@link PAUSES_CHANNEL}). */
  notified(payload: string): void;
  /** The pauses still running in the database, read by the sweep in case a notification was lost. */
  readPauses(): Promise<void>;
  /**
   * This replica's lease ran out: the others took its conversations and its shares over. It
   * holds no share until they count it again, as one that joins (see `live`), and its calls in
   * flight are cut (see `onSharesLost`): their answers could not be stored anyway.
   */
  lapsed(): void;
}

/**
 * How `max_concurrency` and a brain's pause hold for the whole service when replicas share one
 * Postgres: each live replica takes an equal share of each limit (the lowest ids the remainder),
 * from the `replicas` table the sweep reads every second, so the replicas together never call a
 * brain more often than configured; a share moves within a lease and a sweep when a replica dies
 * (its row's lease runs out), within a sweep when one leaves. A pause after a 429 or 503 is
 * written to `brain_pauses` and notified, and every replica pauses that server too, at once, or
 * at its next sweep should the notification be lost.
 */
export function createReplicaBrains(
  pool: Pool,
  replica: string,
  logger: Logger,
  now: () => number,
  leaseValid: () => boolean,
): ReplicaBrains {
  let rank = 0;
  let count = 1;
  let joinedAt: number | undefined;
  let settleMs = 0;
  /** Whether the share counts yet (see `live`); calls that waited meanwhile are looked at once it does. */
  let settled = false;
  let attached: SharedLimiters | undefined;
  const cuts: (() => void)[] = [];
  const starved = new Set<number>();
  /** The other live replicas' ranks and calls. */
  let others: readonly { readonly rank: number; readonly calls: Readonly<Record<string, number>> }[] = [];
  let othersSeen = "";
  let published = "";

  /** The share of `max` that the replica at `at` of `of` holds: equal parts, the lowest ranks the remainder. */
  const shareAt = (max: number, at: number, of: number): number => Math.floor(max / of) + (at < max % of ? 1 : 0);

  /** This replica's pauses not yet written for the others, by target: tried again at each sweep. */
  const untold = new Map<string, PauseNotice>();
  /** Writes `notice` for the others and notifies them; kept in {@link untold} while it cannot. */
  const tell = async (notice: PauseNotice): Promise<void> => {
    try {
      await pool.query(
        `WITH kept AS (
           INSERT INTO webhook_channel.brain_pauses AS p (target, until_ms, status) VALUES ($1, $2, $3)
           ON CONFLICT (target) DO UPDATE SET until_ms = GREATEST(p.until_ms, excluded.until_ms), status = excluded.status)
         SELECT pg_notify($4, $5)`,
        [notice.target, notice.until, notice.status, PAUSES_CHANNEL, JSON.stringify(notice)],
      );
      // Written: an older pause of the target kept for a retry is covered by it (a newer one is not).
      const kept = untold.get(notice.target);
      if (kept !== undefined && kept.until <= notice.until) untold.delete(notice.target);
    } catch (error) {
      const kept = untold.get(notice.target);
      if (kept === undefined) {
        logger.warn("cannot tell the other replicas of a brain's pause; trying again at each sweep while it lasts", {
          error: errorMessage(error),
        });
      }
      if (kept === undefined || kept.until < notice.until) untold.set(notice.target, notice);
      throw error;
    }
  };

  const apply = (notice: PauseNotice): void => {
    if (notice.from !== replica) attached?.pauseTarget(notice.target, notice.until, notice.status);
  };

  /**
   * A replica whose lease ran out counts as gone for the others: they took its conversations and
   * its shares of the limits over. Until it is back in their count it holds no share, and it comes
   * back as one that joins (see `live`), whatever it was when it paused.
   */
  const unsettle = (): void => {
    settled = false;
    joinedAt = undefined;
  };
  const outOfLease = (): boolean => {
    if (leaseValid()) return false;
    unsettle();
    return true;
  };

  return {
    share(max, limiter) {
      // Asked when a slot frees, which after a pause can come before the lease's own timer says it
      // lapsed (and calls `lapsed`): the lease is looked at here too.
      if (outOfLease()) return 0;
      // Until every other replica counts this one, its share is still theirs.
      if (!settled) return 0;
      const share = shareAt(max, rank, count);
      // Calls another replica holds beyond its share were begun under a larger one: their slots
      // are not free yet, whoever's share they now belong to.
      let beyond = 0;
      for (const other of others) beyond += Math.max(0, (other.calls[limiter] ?? 0) - shareAt(max, other.rank, count));
      if (share === 0 && !starved.has(max)) {
        starved.add(max);
        logger.warn("a brain's max_concurrency is smaller than the number of replicas: this one calls it not at all", {
          max_concurrency: max,
          replicas: count,
        });
      }
      return Math.max(0, share - beyond);
    },
    paused(target, until, status) {
      tell({ from: replica, target, until, status }).catch(() => undefined);
    },
    attach(limiters) {
      attached = limiters;
    },
    live(replicas, sweepMs) {
      if (outOfLease()) return;
      const ids = replicas.map((row) => row.id);
      settleMs = 2 * sweepMs;
      // Alone, nobody else holds a share to give up first.
      joinedAt ??= ids.every((id) => id === replica) ? now() - settleMs : now();
      const at = ids.indexOf(replica);
      const nextCount = Math.max(1, at === -1 ? ids.length + 1 : ids.length);
      const nextRank = at === -1 ? ids.length : at;
      const settling = !settled && now() - joinedAt >= settleMs;
      others = replicas.flatMap((row, index) => (row.id === replica ? [] : [{ rank: index, calls: row.calls }]));
      const seen = JSON.stringify(others);
      const freed = seen !== othersSeen;
      othersSeen = seen;
      if (nextCount === count && nextRank === rank && !settling) {
        // Calls of others that ended may have freed part of this replica's share.
        if (freed) attached?.reshared();
        return;
      }
      count = nextCount;
      rank = nextRank;
      settled ||= settling;
      if (settled) logger.info("replicas share the brains' limits", { replicas: count, rank });
      attached?.reshared();
    },
    async publish() {
      const calls = JSON.stringify(Object.fromEntries(attached?.inFlight() ?? []));
      // Unchanged (idle, above all) costs no write.
      if (calls === published) return;
      await pool.query("UPDATE webhook_channel.replicas SET brain_calls = $2::jsonb WHERE id = $1", [replica, calls]);
      published = calls;
    },
    notified(payload) {
      try {
        apply(JSON.parse(payload) as PauseNotice);
      } catch {
        logger.warn("a brain pause notification could not be read");
      }
    },
    lapsed() {
      unsettle();
      for (const cut of cuts) cut();
    },
    onSharesLost(cut) {
      cuts.push(cut);
    },
    async readPauses() {
      // Pauses the others were not told of (the database was away): told now, while they last.
      for (const notice of [...untold.values()]) {
        // Only this copy: a newer pause of the target may have taken its place meanwhile.
        if (notice.until <= now()) {
          if (untold.get(notice.target) === notice) untold.delete(notice.target);
        }
        // Kept again on failure, and the sweep goes on to its other steps.
        else await tell(notice).catch(() => undefined);
      }
      const rows = await pool.query<{ target: string; until_ms: string; status: number }>(
        "SELECT target, until_ms, status FROM webhook_channel.brain_pauses WHERE until_ms > $1",
        [now()],
      );
      for (const row of rows.rows) {
        apply({ from: "", target: row.target, until: Number(row.until_ms), status: row.status });
      }
    },
  };
}
