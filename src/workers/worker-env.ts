import type { ConversationObject } from "./conversation-object.js";
import type { IdempotencyObject } from "./idempotency-object.js";

/**
 * The Worker's environment: the bindings declared in wrangler.toml, the optional
 * `CONFIG_JSON` override, and the secrets (`wrangler secret put`, or `.dev.vars` locally)
 * that the configuration names by `token_env` and other `*_env` keys.
 */
export interface WorkerEnv {
  /** Producer of the inbound queue: accepted messages wait here for the consumer. */
  readonly INBOUND: Queue<unknown>;
  /** Producer of the dead-letter queue: messages that will never be answered. */
  readonly DEAD_LETTERS: Queue<unknown>;
  /** One Durable Object per conversation: its history, and messages too large for a queue. */
  readonly CONVERSATIONS: DurableObjectNamespace<ConversationObject>;
  /** One Durable Object per `Idempotency-Key`: the first answer, for 24 h. */
  readonly IDEMPOTENCY: DurableObjectNamespace<IdempotencyObject>;
  /**
   * Name of the dead-letter queue, so the `queue` handler can tell its batches from inbound
   * ones. Set in wrangler.toml next to the queue definitions.
   */
  readonly DEAD_LETTER_QUEUE?: string;
  /**
   * When present, replaces the bundled config.json: a JSON string (a secret, a `.dev.vars`
   * entry, `--env-file`) or a JSON object (a `[vars]` table).
   */
  readonly CONFIG_JSON?: unknown;
  /** Secrets named by the configuration's `*_env` keys. */
  readonly [variable: string]: unknown;
}

/** The dead-letter queue's name when `DEAD_LETTER_QUEUE` is not set; wrangler.toml uses it. */
export const DEFAULT_DEAD_LETTER_QUEUE = "webhook-channel-dead-letters";

/** Reads a string variable of the environment; anything else counts as unset. */
export function envString(env: WorkerEnv, name: string): string | undefined {
  const value = env[name];
  return typeof value === "string" ? value : undefined;
}
