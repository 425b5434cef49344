import { parseArgs } from "node:util";
import { errorMessage } from "../core/channel-error.js";
import { formatProblem } from "../core/config/config-problem.js";
import { channelName } from "../core/config/validate-config.js";
import { createAdminDeadLetters } from "../core/dead-letters/create-admin-dead-letters.js";
import { type ConfiguredReplay, replayConfigured } from "../core/dead-letters/replay-configured.js";
import { recordReplays } from "../core/dead-letters/replay-timeline.js";
import { DEFAULT_CONFIG_PATH } from "../node/parse-service-args.js";
import { readConfigFile } from "../node/read-config-file.js";
import { createPostgresDeadLetterStore } from "../node/state/postgres/postgres-dead-letter-store.js";
import { openPostgresPool } from "../node/state/postgres/postgres-pool.js";
import { postgresReason } from "../node/state/postgres/postgres-state-error.js";
import { createPostgresTimelineStore } from "../node/state/postgres/postgres-timeline-store.js";
import { postgresUrlProblem } from "../node/state/postgres/postgres-url.js";
import { listDeadLetters } from "../node/state/sqlite/dead-letters.js";
import { createSqliteDeadLetterStore } from "../node/state/sqlite/sqlite-dead-letter-store.js";
import { openStateDb, STATE_FILE, type StateDb } from "../node/state/sqlite/sqlite-state.js";
import { createSqliteTimelineStore } from "../node/state/sqlite/sqlite-timeline-store.js";
import { openTimelineDb } from "../node/state/sqlite/timeline-db.js";
import { adminSecretFrom, createAdminClient, DEFAULT_ADMIN_TOKEN_ENV } from "./admin-client.js";
import type { CliIo } from "./cli-io.js";
import { type DeadLettersRequest, runDeadLettersAction } from "./dead-letters-actions.js";
import { deadLetterItem, formatDeadLetterTable } from "./dead-letters-table.js";
import { noStateDirMessage } from "./dead-letters-without-state.js";
import { missingStateFile } from "./missing-state-file.js";
import { NO_REPLAY_TIMELINE, openCliReplayTimeline } from "./replay-timeline-recorder.js";
import { checkServiceUrl, serviceCallError } from "./service-url.js";
import { UsageError } from "./usage-error.js";

const ACTIONS: readonly string[] = ["list", "show", "replay", "delete"];

/**
 * `dead-letters list [--json] | show --id <id> | replay (--id <id>...|--all) | delete --id <id>...`,
 * each with `[--config <file>]` (the dead letters kept in `state_dir`, or in the Postgres database
 * of `postgres_url_env`, shared by every replica) or `--url <base URL>`
 * (a running service's admin API, secret from `--admin-token-env`). Exit 0 on success, 1 when
 * there is nothing to act on.
 */
export async function runDeadLetters(args: readonly string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  if (action !== "list" && action !== "show" && action !== "replay" && action !== "delete") {
    throw new UsageError(
      action === undefined ? `missing one of ${ACTIONS.join(", ")}` : `unknown action 'dead-letters ${action}'`,
    );
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      config: { type: "string", short: "c" },
      id: { type: "string", multiple: true },
      all: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      url: { type: "string" },
      "admin-token-env": { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  const ids = values.id ?? [];
  if (action === "list" && (ids.length > 0 || values.all)) throw new UsageError("list takes no --id or --all");
  if (ids.some((id) => id.trim() === "")) throw new UsageError("--id needs a dead letter's id, not an empty value");
  if (action === "replay" && values.json && values.url === undefined)
    throw new UsageError("replay takes --json only with --url");
  if (action === "replay" && (ids.length === 0) === !values.all) {
    throw new UsageError("replay needs either --id <id> (repeatable) or --all");
  }
  if (action === "show" && (ids.length !== 1 || values.all)) throw new UsageError("show needs one --id <id>");
  if (action === "delete" && (ids.length === 0 || values.all))
    throw new UsageError("delete needs --id <id> (repeatable)");
  if (action === "delete" && values.json) throw new UsageError("--json is for list, show and replay");
  if (values.url !== undefined && values.config !== undefined) throw new UsageError("give either --url or --config");
  const request: DeadLettersRequest = { action, ids, all: values.all, json: values.json };
  if (values.url !== undefined) {
    checkServiceUrl(values.url);
    const variable = values["admin-token-env"] ?? DEFAULT_ADMIN_TOKEN_ENV;
    const secret = adminSecretFrom(io, variable);
    if (secret === undefined) return 1;
    try {
      return await runDeadLettersAction(createAdminClient(values.url, secret, io.adminTimeoutMs), request, io);
    } catch (error) {
      io.err(serviceCallError(values.url, error));
      return 1;
    }
  }
  const file = values.config ?? DEFAULT_CONFIG_PATH;
  const result = await readConfigFile(file);
  if (!result.ok) {
    for (const problem of result.problems) io.err(`  error   ${formatProblem(problem)}\n`);
    return 1;
  }
  const postgresVariable = result.config.postgres_url_env;
  if (postgresVariable !== undefined) {
    const url = io.env[postgresVariable];
    if (url === undefined || url === "") {
      io.err(
        `environment variable ${postgresVariable} is not set: it must hold the postgres:// URL (postgres_url_env)\n`,
      );
      return 1;
    }
    const unreadable = postgresUrlProblem(url);
    if (unreadable !== undefined) {
      io.err(`${postgresVariable}: the postgres URL cannot be read: ${unreadable}\n`);
      return 1;
    }
    // The replica that runs a replayed conversation picks it up within a second, as from the admin API.
    const pool = openPostgresPool(url, { max: 1 });
    const replays =
      action === "replay"
        ? openCliReplayTimeline(result.config, () => createPostgresTimelineStore(pool), io)
        : NO_REPLAY_TIMELINE;
    try {
      const port = createAdminDeadLetters(
        createPostgresDeadLetterStore(pool),
        replays.timeline,
        result.config.channels.map(channelName),
      );
      return await runDeadLettersAction(port, request, io);
    } catch (error) {
      io.err(`${postgresVariable}: ${postgresReason(error)}\n`);
      return 1;
    } finally {
      await replays.close();
      await pool.end();
    }
  }
  const stateDir = result.config.state_dir;
  if (stateDir === undefined) {
    io.err(noStateDirMessage(file, result.config, request));
    return 1;
  }
  const missing = missingStateFile(file, stateDir, STATE_FILE);
  if (missing !== undefined) {
    io.err(missing);
    return 1;
  }
  let db: StateDb;
  try {
    db = openStateDb(stateDir);
  } catch (error) {
    // A folder this user may not write (the service's own, say): its file cannot be opened for the
    // reads and writes the commands make, nor brought up to date.
    io.err(`cannot open the state in ${stateDir}: ${errorMessage(error)}${noRightsHint(error)}\n`);
    return 1;
  }
  try {
    if (action === "show" || action === "delete") {
      return await runDeadLettersAction(createAdminDeadLetters(createSqliteDeadLetterStore(db)), request, io);
    }
    if (action === "list") {
      const items = listDeadLetters(db).map(deadLetterItem);
      if (values.json) for (const item of items) io.out(`${JSON.stringify(item)}\n`);
      else io.out(formatDeadLetterTable(items));
      io.err(`${items.length} dead letter(s)\n`);
      return 0;
    }
    let timelineDb: StateDb | undefined;
    const replays = openCliReplayTimeline(
      result.config,
      () => {
        timelineDb = openTimelineDb(stateDir);
        return createSqliteTimelineStore(timelineDb);
      },
      io,
    );
    let done: ConfiguredReplay;
    try {
      const filter = values.all ? {} : { ids };
      done = await replayConfigured(createSqliteDeadLetterStore(db), filter, result.config.channels.map(channelName));
      recordReplays(replays.timeline, done.replayed);
    } finally {
      await replays.close();
      timelineDb?.close();
    }
    const replayed = done.replayed.map((subject) => subject.id);
    const left = done.unconfigured.map((letter) => letter.id);
    const missing = ids.filter((id) => !replayed.includes(id) && !left.includes(id));
    for (const id of replayed) io.out(`replayed ${id}\n`);
    for (const { id, channel } of done.unconfigured) {
      io.err(
        `dead letter ${id} is of channel ${JSON.stringify(channel)}, which ${file} does not configure; it stays listed\n`,
      );
    }
    for (const id of missing) io.err(`no dead letter with id ${id}\n`);
    io.err(
      replayed.length === 0
        ? "nothing re-queued\n"
        : `${replayed.length} re-queued; a running service picks them up within a second as far as the queue has room, a stopped one at its next start\n`,
    );
    return missing.length > 0 || left.length > 0 || replayed.length === 0 ? 1 : 0;
  } finally {
    db.close();
  }
}

/** Failures that mean this user may not write the state's file or folder. */
const NO_RIGHTS = new Set([
  "SQLITE_READONLY",
  "SQLITE_READONLY_DIRECTORY",
  "SQLITE_READONLY_CANTINIT",
  "SQLITE_READONLY_CANTLOCK",
  "SQLITE_CANTOPEN",
  "SQLITE_PERM",
  "EACCES",
  "EPERM",
]);

/** The fix for a state this user may not write; nothing for other failures, which say their own. */
function noRightsHint(error: unknown): string {
  const code = error instanceof Error && "code" in error ? String(error.code) : "";
  // better-sqlite3 gives SQLite's extended codes; only these say the user lacks the rights.
  return NO_RIGHTS.has(code) ? ". Run the command as the service's user: it writes to the file" : "";
}
