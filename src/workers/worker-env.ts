/**
 * The Worker's environment. `Cloudflare.Env` holds what wrangler.toml declares (the queue
 * producers, the Durable Object namespaces, `[vars]`); it is generated into
 * src/workers/worker-configuration.d.ts by `npm run types`, and `npm run lint` fails when that file no
 * longer matches wrangler.toml. What wrangler.toml does not declare is added here: the
 * optional `CONFIG_JSON` override, and the secrets (`wrangler secret put`, or `.dev.vars`
 * locally) that the configuration names by `token_env` and other `*_env` keys, which are
 * read by name with {@link envString}.
 */
export interface WorkerEnv extends Cloudflare.Env {
  /**
   * When present, replaces the bundled config.json: a JSON string (a secret, a `.dev.vars`
   * entry, `--env-file`) or a JSON object (a `[vars]` table).
   */
  readonly CONFIG_JSON?: unknown;
  /** Secrets named by the configuration's `*_env` keys, and bindings not in wrangler.toml (AI). */
  readonly [variable: string]: unknown;
}

/** The dead-letter queue's name when `DEAD_LETTER_QUEUE` is not set; wrangler.toml uses it. */
export const DEFAULT_DEAD_LETTER_QUEUE = "webhook-channel-dead-letters";

/** Reads a string variable of the environment; anything else counts as unset. */
export function envString(env: WorkerEnv, name: string): string | undefined {
  const value = env[name];
  return typeof value === "string" ? value : undefined;
}
