import { createBrains } from "../../core/brain/create-brains.js";
import { createBrainLimiters } from "../../core/brain/limits/brain-limits.js";
import type { BrainSharing } from "../../core/brain/limits/brain-sharing.js";
import { type Clock, type IdGenerator, randomId, systemClock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import { type Consumer, createConsumer, type ReloadableConsumer } from "../../core/consumer/create-consumer.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { noopMetrics } from "../../core/metrics/noop-metrics.js";
import type { OperatorEvents } from "../../core/operator-events/operator-events.js";
import type { Poster } from "../../core/outbound/poster.js";
import type { StateBackend } from "../state/state-backend.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { tracedBrains, tracedFetch } from "../telemetry/traced-brains.js";
import { tracedConsumer, tracedPoster } from "../telemetry/traced-delivery.js";
import { createBrainFetch } from "./brain-fetch.js";
import { createUndiciPoster } from "./undici-poster.js";

/** What the Node consumer is built from; everything but `config`, `logger` and `env` has a real default. */
export interface NodeConsumerOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** Reads the variables that brains and delivery name (`*_env`). */
  readonly env: (name: string) => string | undefined;
  /** Where conversation memory is read from (the state backend's store). */
  readonly state: Pick<StateBackend, "conversations">;
  readonly clock?: Clock | undefined;
  readonly newId?: IdGenerator | undefined;
  /** Uniform in [0, 1), for retry jitter. */
  readonly random?: (() => number) | undefined;
  /** Outbound client; default a keep-alive undici pool. */
  readonly poster?: (Poster & { close?: () => Promise<void> }) | undefined;
  /** Where the consumer's timings and counts go; default nowhere. */
  readonly metrics?: Metrics | undefined;
  /** With replicas, this one's share of the brains' limits; default all of them. */
  readonly brainSharing?: BrainSharing | undefined;
  /** Where brain calls and reply POSTs are traced; default nowhere, and nothing is wrapped. */
  readonly telemetry?: Telemetry | undefined;
  /** Where the brains' pauses are raised as operator events; default nowhere. */
  readonly operatorEvents?: OperatorEvents | undefined;
  /** Pauses the brains met before this consumer (a delivery thread that died): they hold here too. */
  readonly pausedBrains?:
    | readonly {
        readonly brain: string;
        readonly until: number;
        readonly status: number;
        readonly since?: number | undefined;
      }[]
    | undefined;
}

/** A built Node consumer and the outbound client it owns. */
export interface NodeConsumer {
  readonly consumer: Consumer;
  /**
   * Rebuilds the brains and the channel routes from a reloaded configuration and swaps them in
   * (see {@link ReloadableConsumer.reload}); rejects with `config_invalid`, changing nothing,
   * when they cannot be built. Conversation memory and the poster stay.
   */
  reload(config: Config, env: (name: string) => string | undefined): Promise<void>;
  /** Closes the outbound client's connections. */
  close(): Promise<void>;
}

/**
 * Builds the consumer as the Node runtime runs it, on the main thread or on the delivery
 * thread: brains (with their limits, kept across reloads), the state backend's conversation
 * memory, and the keep-alive poster. Rejects with `config_invalid` when a variable
 * that delivery needs is unusable.
 */
export async function createNodeConsumer(options: NodeConsumerOptions): Promise<NodeConsumer> {
  const { config, state, env, logger, telemetry } = options;
  const clock = options.clock ?? systemClock;
  const poster = options.poster ?? createUndiciPoster();
  const metrics = options.metrics ?? noopMetrics;
  // One set of limiters for the consumer's life: a reload keeps a brain's calls in flight and
  // its pause when its server is unchanged.
  const limiters = createBrainLimiters(options.brainSharing);
  const brainFetch = createBrainFetch();
  options.brainSharing?.onSharesLost?.(() => brainFetch.cutInFlight());
  const fetch = telemetry === undefined ? brainFetch.fetch : tracedFetch(brainFetch.fetch);
  const brainDeps = { fetch, clock, logger, metrics, limiters, operatorEvents: options.operatorEvents };
  // Without telemetry nothing is wrapped: the hot path stays as it is.
  const brainsOf = (next: Config, nextEnv: (name: string) => string | undefined) => {
    const brains = createBrains(next, { ...brainDeps, env: nextEnv });
    return telemetry === undefined ? brains : tracedBrains(brains, telemetry);
  };
  const consumer = await createConsumer({
    config,
    brains: brainsOf(config, env),
    poster: telemetry === undefined ? poster : tracedPoster(poster, telemetry),
    store: state.conversations,
    clock,
    random: options.random ?? Math.random,
    newId: options.newId ?? randomId,
    logger,
    env,
    metrics,
  });
  for (const pause of options.pausedBrains ?? [])
    limiters.pauseBrain(pause.brain, pause.until, pause.status, pause.since);
  return {
    consumer: telemetry === undefined ? consumer : tracedConsumer(consumer),
    reload: async (next, nextEnv) => consumer.reload({ config: next, brains: brainsOf(next, nextEnv), env: nextEnv }),
    close: async () => {
      await Promise.all([poster.close?.(), brainFetch.close()]);
    },
  };
}
