import type { Config } from "../core/config/config-schema.js";
import { shellWord } from "../core/shell-word.js";
import { DEFAULT_ADMIN_TOKEN_ENV } from "./admin-client.js";
import { configAdminUrl } from "./config-admin-url.js";
import type { DeadLettersRequest } from "./dead-letters-actions.js";

/**
 * What an offline `dead-letters` action says for a configuration without `state_dir`, where
 * nothing is kept on disk. With `admin` the running service keeps its dead letters in memory
 * and `--url` reaches them, so the message gives that command, ready to run; without it a dead
 * letter was only a log line, and the message says how to keep the next ones.
 */
export function noStateDirMessage(file: string, config: Config, request: DeadLettersRequest): string {
  const head = `${file} has no "state_dir", so no dead letters are kept on disk for this command to read.`;
  const admin = config.admin?.token_env;
  if (admin === undefined) {
    return (
      `${head} Without state_dir and without "admin" a dead letter is only its log line ` +
      `(level error, msg "dead letter: ..."). To keep the next ones, set "state_dir" (on disk, for this command), ` +
      `or "admin": {"token_env": "${DEFAULT_ADMIN_TOKEN_ENV}"} (in the running service's memory, reached with --url).\n`
    );
  }
  const command = [
    "npx webhook-channel dead-letters",
    request.action,
    ...request.ids.flatMap((id) => ["--id", shellWord(id)]),
    ...(request.all ? ["--all"] : []),
    ...(request.json ? ["--json"] : []),
    "--url",
    configAdminUrl(config),
    ...(admin === DEFAULT_ADMIN_TOKEN_ENV ? [] : ["--admin-token-env", admin]),
  ].join(" ");
  return (
    `${head} With "admin" on, the running service keeps them in its memory until it stops; ` +
    `reach them through its admin API, with the admin secret in ${admin}:\n  ${command}\n`
  );
}
