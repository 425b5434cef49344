import { createBrains } from "../../core/brain/create-brains.js";
import type { BrainSharing } from "../../core/brain/limits/brain-sharing.js";
import { ChannelError } from "../../core/channel-error.js";
import type { Clock } from "../../core/clock.js";
import { systemClock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import { envReferences } from "../../core/config/preflight/preflight.js";
import { createChannelRoutes } from "../../core/consumer/channel-routes.js";
import type { RunHooks } from "../../core/consumer/create-consumer.js";
import type { Job, JobOutcome } from "../../core/lifecycle/job.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import type { OperatorEvents } from "../../core/operator-events/operator-events.js";
import type { Admission } from "../../core/receiver/receiver-circuit.js";
import { createNodeConsumer } from "../consumer/node-consumer.js";
import { startDeliveryThread } from "../delivery-thread/delivery-thread.js";
import type { StateBackend } from "../state/state-backend.js";
import type { ServiceOptions } from "./service-options.js";

/** Reads the variables that brains and delivery name (`*_env`). */
type EnvLookup = (name: string) => string | undefined;

/** The consumer as the job queues see it, wherever it runs. */
export interface RunningConsumer {
  /** Runs a job as far as it goes, storing its steps through `hooks`, posting as `admission` allows. */
  run(job: Job, hooks: RunHooks, admission: Admission): Promise<JobOutcome>;
  /**
   * Rebuilds brains and channel routes from a reloaded configuration and swaps them in; the
   * next attempt of every job uses them. Rejects, changing nothing, when they cannot be built.
   */
  reload(config: Config, env: EnvLookup): Promise<void>;
  /** Ends it; the delivery thread gets `timeoutMs` to finish on its own. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Step 2 of a start: the consumer on the main thread, or on the delivery thread with
 * `delivery_thread`; either way its events reach `metrics` and its brains' pauses
 * `operatorEvents` (the thread sends them over).
 */
export async function startConsumer(
  options: ServiceOptions,
  state: StateBackend,
  metrics?: Metrics,
  brainSharing?: BrainSharing,
  operatorEvents?: OperatorEvents,
): Promise<RunningConsumer> {
  const { config, logger } = options;
  const env = options.env ?? (() => undefined);
  if (config.delivery_thread) {
    if (options.deliveryThread === undefined) {
      throw new ChannelError(
        "config_invalid",
        "delivery_thread needs dist/delivery-worker.js: start the service with node dist/node.js or npx webhook-channel serve",
      );
    }
    if (options.poster !== undefined || options.random !== undefined) {
      throw new Error("poster and random belong to the in-thread consumer; the delivery thread builds its own");
    }
    const clock = options.clock ?? systemClock;
    // The thread sees a copy of the environment: secrets read from `<NAME>_FILE` (or any
    // other way the lookup knows) are resolved here and handed over with it.
    const thread = await startDeliveryThread({
      ...options.deliveryThread,
      env: { ...options.deliveryThread.env, ...resolvedVariables(config, env) },
      config,
      logger,
      metrics,
      operatorEvents,
    });
    return {
      run: (job, hooks, admission) => thread.run(job, hooks, admission),
      async reload(next, nextEnv) {
        // Built here first as well: a thread that is being replaced after a crash cannot say
        // whether the new configuration is usable, and its replacement must not fail to start.
        await tryBuild(next, nextEnv, clock);
        await thread.reload(next, resolvedVariables(next, nextEnv));
      },
      close: (timeoutMs) => thread.close(timeoutMs),
    };
  }
  const built = await createNodeConsumer({
    config,
    logger,
    env,
    state,
    metrics,
    clock: options.clock,
    newId: options.newId,
    random: options.random,
    poster: options.poster,
    brainSharing,
    telemetry: options.telemetry,
    operatorEvents,
  });
  return {
    run: (job, hooks, admission) => built.consumer.run(job, hooks, admission),
    async reload(next, nextEnv) {
      // Built apart first: a configuration that cannot be built changes nothing of the running
      // brains (their limits included), as on the delivery thread.
      await tryBuild(next, nextEnv, options.clock ?? systemClock);
      await built.reload(next, nextEnv);
    },
    close: async () => built.close(),
  };
}

/** The value of every variable the configuration names, as the lookup resolves it. */
function resolvedVariables(config: Config, env: EnvLookup): Record<string, string | undefined> {
  const values: Record<string, string | undefined> = {};
  for (const { variable } of envReferences(config)) values[variable] = env(variable);
  return values;
}

/** Builds brains and routes, only to reject with their `config_invalid` when they cannot be. */
async function tryBuild(config: Config, env: EnvLookup, clock: Clock): Promise<void> {
  await createChannelRoutes(config, createBrains(config, { fetch: globalThis.fetch, env, clock }), env);
}
