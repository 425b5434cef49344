import { shellWord } from "../../core/shell-word.js";

/** What a dead letter's log line says when nothing keeps it: no `state_dir` and no admin API. */
export const NOT_KEPT =
  "not kept: without state_dir or admin.token_env a dead letter is only this log line (see docs/delivery.md)";

/** Where a Node service keeps its dead letters, which decides how one is replayed. */
export interface ReplayHintOptions {
  /** The configuration file's absolute path; undefined when the service was started without one (tests, embedding). */
  readonly configPath: string | undefined;
  /** True with `state_dir`: letters are in SQLite, and the offline CLI replays them. */
  readonly durable: boolean;
  /**
   * With `admin.token_env`: the channel's base URL and the admin secret's variable, for
   * `--url`. Without `state_dir` the admin API is the only way to a letter kept in memory.
   */
  readonly admin: { readonly url: () => string; readonly tokenEnv: string } | undefined;
}

/**
 * The `replay` field of a dead letter's log line: the command that replays it. With
 * `state_dir` the offline CLI on the configuration file (it works with or without the service
 * running); without it but with the admin API, the CLI against the running service, since the
 * letter lives only in that process's memory; with neither, that it is not kept.
 */
export function replayHintFor(options: ReplayHintOptions): (id: string) => string {
  if (options.durable) {
    const config = options.configPath === undefined ? "<config.json>" : shellWord(options.configPath);
    return (id) => `npx webhook-channel dead-letters replay --id ${id} --config ${config}`;
  }
  const { admin } = options;
  if (admin !== undefined) {
    // The URL is asked per line: with port 0 the port is known only once the service listens.
    return (id) =>
      `kept in this process's memory until it ends: npx webhook-channel dead-letters replay --id ${id} --url ${shellWord(admin.url())} --admin-token-env ${admin.tokenEnv}`;
  }
  return () => NOT_KEPT;
}
