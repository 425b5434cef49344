import { systemClock } from "../core/clock.js";
import { formatProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { DEFAULT_TIMELINE_HOURS } from "../core/config/timeline-schema.js";
import { createTimelineAdmin, type TimelineAdmin } from "../core/timeline/timeline-admin.js";
import { readConfigFile } from "../node/read-config-file.js";
import { openPostgresPool } from "../node/state/postgres/postgres-pool.js";
import { postgresReason } from "../node/state/postgres/postgres-state-error.js";
import { createPostgresTimelineStore } from "../node/state/postgres/postgres-timeline-store.js";
import { postgresUrlProblem } from "../node/state/postgres/postgres-url.js";
import { createSqliteTimelineStore } from "../node/state/sqlite/sqlite-timeline-store.js";
import { openTimelineDb, TIMELINE_FILE } from "../node/state/sqlite/timeline-db.js";
import { DEFAULT_ADMIN_TOKEN_ENV } from "./admin-client.js";
import type { CliIo } from "./cli-io.js";
import { configAdminUrl } from "./config-admin-url.js";
import { type MessagesRequest, messagesCommand } from "./messages-request.js";
import { missingStateFile } from "./missing-state-file.js";

/** The timeline a configuration's state holds, opened for one command. */
export interface StateTimeline {
  readonly admin: TimelineAdmin;
  /** What an error reading it is prefixed with: the state file's folder or the URL's variable. */
  readonly where: string;
  /** Makes a driver's error fit to print (a Postgres one names no password). */
  readonly describe: (error: unknown) => string;
  close(): Promise<void>;
}

/**
 * Opens the timeline of the configuration in `file`, as the service keeps it: in the Postgres
 * database of `postgres_url_env` (every replica's), else in `state_dir` (SQLite), without a
 * running service. Undefined, after saying why on stderr, when there is nothing to read: an
 * unusable file, an unset variable, the timeline turned off, or the memory mode, whose
 * timeline lives only in the running service (the message gives the `--url` command).
 */
export async function openStateTimeline(
  file: string,
  request: MessagesRequest,
  io: CliIo,
): Promise<StateTimeline | undefined> {
  const result = await readConfigFile(file);
  if (!result.ok) {
    for (const problem of result.problems) io.err(`  error   ${formatProblem(problem)}\n`);
    return undefined;
  }
  const { config } = result;
  if (config.timeline.retention_hours === 0 || config.timeline.max_messages === 0) {
    io.err(
      `${file} turns the message timeline off (timeline.retention_hours or timeline.max_messages is 0), so no timeline is kept to read. Remove that setting (by default a timeline is kept ${DEFAULT_TIMELINE_HOURS} hours) to keep the next messages'.\n`,
    );
    return undefined;
  }
  const variable = config.postgres_url_env;
  if (variable !== undefined) {
    const url = io.env[variable];
    if (url === undefined || url === "") {
      io.err(`environment variable ${variable} is not set: it must hold the postgres:// URL (postgres_url_env)\n`);
      return undefined;
    }
    const unreadable = postgresUrlProblem(url);
    if (unreadable !== undefined) {
      io.err(`${variable}: the postgres URL cannot be read: ${unreadable}\n`);
      return undefined;
    }
    const pool = openPostgresPool(url, { max: 1 });
    return {
      admin: createTimelineAdmin(createPostgresTimelineStore(pool), systemClock),
      where: variable,
      describe: postgresReason,
      close: () => pool.end(),
    };
  }
  const stateDir = config.state_dir;
  if (stateDir === undefined) {
    io.err(memoryModeMessage(file, config, request));
    return undefined;
  }
  const missing = missingStateFile(file, stateDir, TIMELINE_FILE);
  if (missing !== undefined) {
    io.err(missing);
    return undefined;
  }
  const db = openTimelineDb(stateDir);
  return {
    admin: createTimelineAdmin(createSqliteTimelineStore(db), systemClock),
    where: stateDir,
    describe: (error) => (error instanceof Error ? error.message : String(error)),
    close: async () => {
      db.close();
    },
  };
}

/**
 * The memory mode keeps every timeline in the running service only: with `admin` on the
 * message gives the `--url` command that reads it; without, nothing can.
 */
function memoryModeMessage(file: string, config: Config, request: MessagesRequest): string {
  const head = `${file} has neither "state_dir" nor "postgres_url_env": the service keeps message timelines in its memory only, so there is nothing on disk for this command to read.`;
  const admin = config.admin?.token_env;
  if (admin === undefined) {
    return `${head} Without "admin" they cannot be read from outside either: set "admin": {"token_env": "${DEFAULT_ADMIN_TOKEN_ENV}"} to read them with --url while the service runs, or "state_dir" to keep them on disk.\n`;
  }
  const source = ["--url", configAdminUrl(config)];
  if (admin !== DEFAULT_ADMIN_TOKEN_ENV) source.push("--admin-token-env", admin);
  const cursor = request.action === "list" ? request.query.cursor : undefined;
  return `${head} Ask the running service through its admin API, with the admin secret in ${admin}:\n  ${messagesCommand(request, cursor, source)}\n`;
}
