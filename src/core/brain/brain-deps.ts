import { ChannelError } from "../channel-error.js";
import type { Clock } from "../clock.js";
import { type EnvLookup, envValueProblem } from "../config/preflight/preflight.js";
import type { Logger } from "../log/logger.js";
import type { Metrics } from "../metrics/metrics.js";
import type { OperatorEvents } from "../operator-events/operator-events.js";
import type { BrainLimiters } from "./limits/brain-limits.js";

/**
 * The part of a Workers AI binding (`env.AI`) that brains use. Declared here, not taken from
 * the Workers types, so the core compiles without them and tests can pass their own.
 */
export interface AiBinding {
  run(model: string, input: unknown): Promise<unknown>;
}

/** What brains are built with: the platform's I/O, injected so the core stays portable. */
export interface BrainDeps {
  /** HTTP client for the `openai`, `http` and `rasa` brains. */
  readonly fetch: typeof fetch;
  /** Where `*_env` secrets are read, once, when the brains are created. */
  readonly env: EnvLookup;
  /** The Workers AI binding; absent outside Workers, where `workers-ai` brains cannot run. */
  readonly ai?: AiBinding;
  /** Time source for `Retry-After` dates and the end of a brain's pause; default the system clock. */
  readonly clock?: Clock;
  /** Where a brain's pause and resumption are logged; default nowhere. */
  readonly logger?: Logger;
  /** Where each brain's calls in flight and pause go (`brainInFlight`, `brainPaused`); default nowhere. */
  readonly metrics?: Metrics;
  /**
   * The brains' limiters, to keep across builds (see `createBrainLimiters`): a reload passes
   * the ones of the first build, so the in-flight calls and a pause of a brain whose server is
   * unchanged carry over. Default new limiters for this build.
   */
  readonly limiters?: BrainLimiters;
  /** See `BrainLimiterOptions.waiterPollMs`: set on Workers, where one limiter serves many Durable Objects. */
  readonly waiterPollMs?: number;
  /** Where a brain's pause and resumption are raised as operator events; default nowhere. */
  readonly operatorEvents?: OperatorEvents | undefined;
}

/**
 * Reads the secret a brain names in one of its `*_env` keys, which travels in a header of every
 * call, without the whitespace around it (a header sends none: a key exported with its file's
 * trailing newline works, and is redacted as sent). An unset or empty variable, or one a header
 * cannot carry (every call would fail before reaching the server, as if the network did), is a
 * `config_invalid` error that names the variable and the key, never a value.
 */
export function requireSecret(env: EnvLookup, variable: string, brain: string, key: string): string {
  const value = env(variable)?.trim();
  if (value === undefined || value === "") {
    throw new ChannelError(
      "config_invalid",
      `brain "${brain}": environment variable ${variable} (brains.${brain}.${key}) is ${value === undefined ? "not set" : "empty"}; export it before starting`,
      { retryable: false, brain, variable },
    );
  }
  const problem = envValueProblem(value);
  if (problem !== undefined) {
    throw new ChannelError(
      "config_invalid",
      `brain "${brain}": environment variable ${variable} (brains.${brain}.${key}) ${problem}; export it again as the key alone`,
      { retryable: false, brain, variable },
    );
  }
  return value;
}
