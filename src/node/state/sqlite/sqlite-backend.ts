import { resolve } from "node:path";
import { errorMessage } from "../../../core/channel-error.js";
import { DEFAULT_MEMORY_RETENTION, type MemoryRetention } from "../../../core/conversation/memory-retention.js";
import type { Logger } from "../../../core/log/logger.js";
import { createMemoryCircuitStore } from "../../../core/receiver/memory-circuit-store.js";
import { MemoryTimelineStore } from "../../../core/timeline/memory-timeline-store.js";
import type { TimelineStore } from "../../../core/timeline/timeline-store.js";
import type { StateBackend, StateRole } from "../state-backend.js";
import { confirmWrite, probeWrite } from "./probe-write.js";
import { createSqliteCircuitStore } from "./sqlite-circuit-store.js";
import { createSqliteConversationStore } from "./sqlite-conversation-store.js";
import { createSqliteDeadLetterStore } from "./sqlite-dead-letter-store.js";
import { claimSqliteEpoch, type SqliteEpoch } from "./sqlite-epoch.js";
import { createGroupCommit } from "./sqlite-group-commit.js";
import { createSqliteIdempotencyStore, pruneIdempotencyKeys } from "./sqlite-idempotency-store.js";
import { forgetIdleSqliteLanes } from "./sqlite-idle-lanes.js";
import { createSqliteLaneStore } from "./sqlite-lane-store.js";
import { openStateDb } from "./sqlite-state.js";
import { createSqliteTimelineStore } from "./sqlite-timeline-store.js";
import { pruneSqliteTurns } from "./sqlite-turn-prune.js";
import type { StateDb } from "./state-db.js";
import { STATE_FILE } from "./state-file.js";
import { createThreadedTimelineStore, type ThreadedTimelineStore } from "./threaded-timeline-store.js";
import { openTimelineDb } from "./timeline-db.js";

/**
 * The SQLite mode (`state_dir`): one database file holds accepted jobs, conversations,
 * sequences, idempotency keys and dead letters, so a restart (or `kill -9`) loses nothing
 * that was answered 200. The stores of the connection share one group commit: the writes of
 * an event-loop turn are one transaction.
 */
export function openSqliteBackend(
  stateDir: string,
  logger: Logger,
  role: StateRole = "service",
  timeline: SqliteTimelineOptions = {},
  retention: MemoryRetention = DEFAULT_MEMORY_RETENTION,
): StateBackend {
  const db = openStateDb(stateDir, (change) => {
    // The service's connection says it; the delivery thread's, which may open the file too, not.
    if (role !== "service") return;
    const path = resolve(stateDir, STATE_FILE);
    if (change.created) logger.info("state_dir file created", { path, layout: change.to });
    else
      logger.info("state_dir file brought up to date", {
        path,
        from_layout: change.from,
        layout: change.to,
      });
  });
  let parts: ReturnType<typeof openParts>;
  try {
    parts = openParts(db, stateDir, logger, role, timeline, retention);
  } catch (error) {
    // A start that fails here (the file locked past the wait, the timeline's thread refused)
    // leaves no file open behind it (a test, an embedder, retries).
    db.close();
    throw error;
  }
  const { epoch, group, conversations, lanes, countByChannel, timelineStore } = parts;
  return {
    mode: "sqlite",
    lanes,
    epoch: epoch.value,
    // The service keeps its receivers' circuits in the file; a reader (the delivery thread) keeps none.
    circuits: role === "service" ? createSqliteCircuitStore(db, epoch.check) : createMemoryCircuitStore(),
    circuitRefreshMs: undefined,
    idempotency: createSqliteIdempotencyStore(db),
    conversations,
    timeline: timelineStore,
    sqlite: { db, lanes },
    postgres: undefined,
    deadLetterStore: () => createSqliteDeadLetterStore(db),
    storedDeadLetters: () => new Map(countByChannel.all().map(({ channel, n }) => [channel, n])),
    // A file another process claimed since is not this one's to write: a balancer stops sending here.
    writeProblem: () => (role === "service" ? claimProblem(epoch) : undefined) ?? probeWrite(db),
    claimLost: role === "service" ? () => claimProblem(epoch) : undefined,
    knownWriteProblem: undefined,
    writesConfirmedAt: () => (role === "service" ? confirmWrite(db, epoch.check) : undefined),
    // Absolute, so that an operator can tell which file holds the work, whatever the cwd was.
    describe: () => ({ mode: "sqlite", path: resolve(db.name), timeline: timelineWhere(role, timeline) }),
    pruneExpired: (now) => pruneIdempotencyKeys(db, now, epoch.check),
    pruneConversations: (cutoff) => pruneSqliteTurns(db, cutoff, epoch.check),
    forgetIdleConversations: (cutoff) =>
      forgetIdleSqliteLanes(db, cutoff, { fence: epoch.check, forgotten: (keys) => lanes.forgetNumbers(keys) }),
    close: async () => {
      // What waits for its group (finished jobs' deletes above all) is committed first.
      if (db.open) group.flush();
      db.close();
      await timelineStore.close();
    },
  };
}

/** The stores over the state file's connection, and the timeline's; throws when one cannot be had. */
function openParts(
  db: StateDb,
  stateDir: string,
  logger: Logger,
  role: StateRole,
  timeline: SqliteTimelineOptions,
  retention: MemoryRetention,
) {
  // A reader (the delivery thread reads conversation memory) leaves the service's claim alone.
  const epoch = role === "service" ? claimSqliteEpoch(db) : { value: 0, check: refuseWrites };
  const group = createGroupCommit(db, logger, epoch.check);
  const conversations = createSqliteConversationStore(db, undefined, group, retention);
  const lanes = createSqliteLaneStore(db, logger, group, epoch, conversations);
  const countByChannel = db.prepare<[], { channel: string; n: number }>(
    "SELECT channel, count(*) AS n FROM dead_letters GROUP BY channel",
  );
  const timelineStore = openTimeline(stateDir, role, timeline);
  return { epoch, group, conversations, lanes, countByChannel, timelineStore };
}

/** Where the state line says the timeline is written: an operator sees a thread that is missing. */
function timelineWhere(role: StateRole, { writer, off }: SqliteTimelineOptions): string {
  if (role === "reader" || off === true) return "off";
  return writer === undefined ? "main thread" : "writer thread";
}

/** How `state_dir`'s timeline is kept. */
export interface SqliteTimelineOptions {
  /** The timeline writer thread's module (dist/timeline-writer.js); without it the writes run on this thread. */
  readonly writer?: URL | undefined;
  /** The configuration turns the timeline off (`retention_hours` or `max_messages` 0). */
  readonly off?: boolean;
}

/**
 * The timeline of `state_dir`, in its own file: written on the timeline writer thread when the
 * service runs from dist/ (`writer`), else on this thread. A reader (the delivery thread) never
 * writes or reads it, and a timeline turned off records nothing: both get an empty store in
 * memory instead, with no file and no thread.
 */
function openTimeline(
  stateDir: string,
  role: StateRole,
  { writer, off }: SqliteTimelineOptions,
): TimelineStore & { close(): void | Promise<void> } {
  if (role === "reader" || off === true) return Object.assign(new MemoryTimelineStore(0), { close: () => undefined });
  const db = openTimelineDb(stateDir);
  if (writer !== undefined) {
    let threaded: ThreadedTimelineStore;
    try {
      threaded = createThreadedTimelineStore(stateDir, writer, db);
    } catch (error) {
      db.close();
      throw error;
    }
    return {
      ...threaded,
      close: async () => {
        await threaded.close();
        db.close();
      },
    };
  }
  return Object.assign(createSqliteTimelineStore(db), {
    close: () => {
      db.close();
    },
  });
}

/** Why this process may no longer write the file (another one claimed it), undefined while it may. */
function claimProblem(epoch: SqliteEpoch): string | undefined {
  try {
    epoch.check();
    return undefined;
  } catch (error) {
    return errorMessage(error);
  }
}

/** A reader's writes: it makes none through the lanes. */
function refuseWrites(): void {
  throw new Error("a reader of state_dir writes no lanes");
}
