import type { Clock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import type { Logger } from "../../core/log/logger.js";
import { timelineIsOn, timelineRetention } from "../../core/timeline/timeline-recorder.js";
import { createMemoryBackend } from "./memory-backend.js";
import { openPostgresBackend } from "./postgres/postgres-backend.js";
import { openSqliteBackend } from "./sqlite/sqlite-backend.js";
import type { StateBackend, StateRole } from "./state-backend.js";

/**
 * Opens the state backend the configuration names: Postgres with `postgres_url_env` (the URL
 * read from that variable; the schema is migrated first), SQLite with `state_dir` (creating the
 * folder and its database, and the timeline's file and writer thread unless the timeline is off),
 * memory otherwise. The delivery thread opens its own, over its own connection: better-sqlite3
 * connections cannot cross threads.
 */
export async function openStateBackend(
  config: Config,
  clock: Clock,
  logger: Logger,
  env: (name: string) => string | undefined,
  role: StateRole = "service",
  timelineWriter?: URL,
): Promise<StateBackend> {
  const variable = config.postgres_url_env;
  if (variable !== undefined) {
    const url = env(variable);
    if (url === undefined || url === "") {
      throw new Error(
        `postgres_url_env names ${variable}, which is not set: export ${variable}="postgres://<user>:<password>@<host>:5432/<database>"`,
      );
    }
    return openPostgresBackend(url, logger, clock);
  }
  return config.state_dir === undefined
    ? createMemoryBackend(
        clock,
        config.delivery_thread && role === "service",
        timelineRetention(config.timeline, false).maxMessages,
      )
    : openSqliteBackend(config.state_dir, logger, role, {
        writer: timelineWriter,
        off: !timelineIsOn(timelineRetention(config.timeline, true)),
      });
}
