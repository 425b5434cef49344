import type { Clock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import type { MemoryRetention } from "../../core/conversation/memory-retention.js";
import type { Logger } from "../../core/log/logger.js";
import { timelineIsOn, timelineRetention } from "../../core/timeline/timeline-recorder.js";
import { createMemoryBackend } from "./memory-backend.js";
import type { StateBackend, StateRole } from "./state-backend.js";
import { withStateUpkeep } from "./state-upkeep.js";

/**
 * Opens the state backend the configuration names: Postgres with `postgres_url_env` (the URL
 * read from that variable; the schema is migrated first), SQLite with `state_dir` (creating the
 * folder and its database, and the timeline's file and writer thread unless the timeline is off),
 * memory otherwise. The delivery thread opens its own, over its own connection: better-sqlite3
 * connections cannot cross threads.
 *
 * Each durable backend is loaded only when named, with its driver: a service in memory or on
 * SQLite never loads `pg`, and one in memory never loads `better-sqlite3`, in either thread,
 * since each loaded module costs every thread that loads it memory for as long as it runs.
 *
 * Conversation memory is kept for `conversation_memory.retention_hours` by every backend; the
 * service's SQLite or Postgres state also deletes older turns, idle conversations' counters and
 * expired idempotency keys on a schedule (a reader never does: the service's copy of the same
 * state keeps it up).
 */
export async function openStateBackend(
  config: Config,
  clock: Clock,
  logger: Logger,
  env: (name: string) => string | undefined,
  role: StateRole = "service",
  timelineWriter?: URL,
): Promise<StateBackend> {
  const retention: MemoryRetention = { hours: config.conversation_memory.retention_hours, now: () => clock.now() };
  const state = await openBackend(config, clock, logger, env, role, timelineWriter, retention);
  return role === "service" && state.mode !== "memory" ? withStateUpkeep(state, retention, logger) : state;
}

async function openBackend(
  config: Config,
  clock: Clock,
  logger: Logger,
  env: (name: string) => string | undefined,
  role: StateRole,
  timelineWriter: URL | undefined,
  retention: MemoryRetention,
): Promise<StateBackend> {
  const variable = config.postgres_url_env;
  if (variable !== undefined) {
    const url = env(variable);
    if (url === undefined || url === "") {
      throw new Error(
        `postgres_url_env names ${variable}, which is not set: export ${variable}="postgres://<user>:<password>@<host>:5432/<database>"`,
      );
    }
    const { openPostgresBackend } = await import("./postgres/postgres-backend.js");
    return openPostgresBackend(url, logger, clock, undefined, retention.hours);
  }
  if (config.state_dir === undefined) {
    return createMemoryBackend(
      clock,
      config.delivery_thread && role === "service",
      timelineRetention(config.timeline, false).maxMessages,
      retention.hours,
    );
  }
  const { openSqliteBackend } = await import("./sqlite/sqlite-backend.js");
  return openSqliteBackend(
    config.state_dir,
    logger,
    role,
    {
      writer: timelineWriter,
      off: !timelineIsOn(timelineRetention(config.timeline, true)),
    },
    retention,
  );
}
