import type { Clock } from "../clock/clock.js";

/**
 * The part of a Workers AI binding (`env.AI`) that brains use. Declared here, not taken from
 * the Workers types, so the core compiles without them and tests can pass their own.
 */
export interface AiBinding {
  run(model: string, input: unknown): Promise<unknown>;
}

/** Environment lookup: returns the variable's value, or undefined when it is not set. */
export type EnvLookup = (name: string) => string | undefined;

/** What brains are built with: the platform's I/O, injected so the core stays portable. */
export interface BrainDeps {
  /** HTTP client for the `openai`, `http` and `rasa` brains. */
  readonly fetch: typeof fetch;
  /** Where `*_env` secrets are read, once, when the brains are created. */
  readonly env: EnvLookup;
  /** The Workers AI binding; absent outside Workers, where `workers-ai` brains cannot run. */
  readonly ai?: AiBinding;
  /** Time source for `Retry-After` dates; default the system clock. */
  readonly clock?: Clock;
}
