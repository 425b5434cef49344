import type { Config } from "../../core/config/config-schema.js";

/**
 * The `replay` field of a dead letter's log line on Workers: every letter is kept by the
 * dead-letter store (the dead-letter queue's consumer puts it there), and the admin API, when
 * `admin.token_env` is set, is how it is replayed.
 */
export function workersReplayHint(config: Config | undefined): (id: string) => string {
  const tokenEnv = config?.admin?.token_env;
  if (tokenEnv === undefined) {
    return () => "kept by the Worker's dead-letter store: set admin.token_env to list and replay it (docs/workers.md)";
  }
  return (id) =>
    `kept by the Worker's dead-letter store: npx webhook-channel dead-letters replay --id ${id} --url <the Worker's URL> --admin-token-env ${tokenEnv}`;
}
