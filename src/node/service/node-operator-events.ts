import type { Clock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { createOperatorEventRoutes } from "../../core/operator-events/operator-event-routes.js";
import {
  createOperatorEventSender,
  type OperatorEventSender,
} from "../../core/operator-events/operator-event-sender.js";
import { createFetchPoster } from "../../core/outbound/fetch-poster.js";

/** What the Node service's operator events are built from. */
export interface NodeOperatorEventsOptions {
  readonly config: Config;
  /** Reads the signing variables `operator_events` names. */
  readonly env: (name: string) => string | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock: Clock;
}

/**
 * The sender of the service's operator events, on the main thread (the delivery thread hands its
 * events over): routes from the configuration, signing keys read and imported once (a start
 * fails, naming the variable, on one that is unset or unusable), POSTs through Node's `fetch`,
 * apart from the replies' connection pool, since events are rare and must not take its sockets.
 */
export async function startOperatorEvents(options: NodeOperatorEventsOptions): Promise<OperatorEventSender> {
  return createOperatorEventSender({
    routes: await createOperatorEventRoutes(options.config, options.env),
    poster: createFetchPoster(globalThis.fetch),
    logger: options.logger,
    metrics: options.metrics,
    clock: options.clock,
  });
}
