import type { Clock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import type { Logger } from "../../core/log/logger.js";
import { createMemoryBackend } from "./memory-backend.js";
import { openSqliteBackend } from "./sqlite-backend.js";
import type { StateBackend } from "./state-backend.js";

/**
 * Opens the state backend the configuration names: SQLite with `state_dir` (creating the
 * folder and its database), memory otherwise. The delivery thread opens its own, over its own
 * connection: better-sqlite3 connections cannot cross threads.
 */
export function openStateBackend(config: Config, clock: Clock, logger: Logger): StateBackend {
  return config.state_dir === undefined ? createMemoryBackend(clock) : openSqliteBackend(config.state_dir, logger);
}
