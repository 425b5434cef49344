import { ChannelError } from "../../core/channel-error.js";
import type { Job, JobOutcome } from "../../core/delivery/job.js";
import { createNodeConsumer } from "../delivery/node-consumer.js";
import { startDeliveryThread } from "../delivery-thread/delivery-thread.js";
import type { StateDb } from "../state/sqlite-state.js";
import type { ServiceOptions } from "./service-options.js";

/** The consumer as the job queues see it, wherever it runs. */
export interface RunningConsumer {
  run(job: Job, onProgress: (job: Job) => void): Promise<JobOutcome>;
  /** Ends it; the delivery thread gets `timeoutMs` to finish on its own. */
  close(timeoutMs: number): Promise<void>;
}

/** Step 2 of a start: the consumer on the main thread, or on the delivery thread with `delivery_thread`. */
export async function startConsumer(options: ServiceOptions, db: StateDb | undefined): Promise<RunningConsumer> {
  const { config, logger } = options;
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
    return startDeliveryThread({ ...options.deliveryThread, config, logger });
  }
  const built = await createNodeConsumer({
    config,
    logger,
    env: options.env ?? (() => undefined),
    db,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.newId === undefined ? {} : { newId: options.newId }),
    ...(options.random === undefined ? {} : { random: options.random }),
    ...(options.poster === undefined ? {} : { poster: options.poster }),
  });
  return { run: (job, onProgress) => built.consumer.run(job, onProgress), close: async () => built.close() };
}
