import type { Clock, IdGenerator } from "../clock.js";
import type { Logger } from "../log/logger.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Poster } from "../outbound/poster.js";
import type { OperatorEventRoutes } from "./operator-event-routes.js";
import type { Schedule } from "./unref-timeout.js";

/** What the sender is built from; everything but the routes, poster and logger has a default. */
export interface OperatorEventSenderOptions {
  readonly routes: OperatorEventRoutes;
  /** The outbound HTTP port: `fetch` on every runtime (events are rare, and never on the hot path). */
  readonly poster: Poster;
  readonly logger: Logger;
  readonly metrics?: Pick<Metrics, "operatorEvent"> | undefined;
  readonly clock?: Clock | undefined;
  readonly newId?: IdGenerator | undefined;
  /** Uniform in [0, 1), for the retries' jitter. */
  readonly random?: (() => number) | undefined;
  /** Events kept at most; beyond, the oldest is dropped with a warning. Default `DEFAULT_OPERATOR_EVENT_CAPACITY`. */
  readonly capacity?: number | undefined;
  /** Attempts per event and URL. Default `DEFAULT_OPERATOR_EVENT_ATTEMPTS`. */
  readonly maxAttempts?: number | undefined;
  /** Ceiling of the first retry's wait, doubling per attempt (full jitter). Default 1 s. */
  readonly initialDelayMs?: number | undefined;
  /** Longest wait between attempts, and the cap on an honoured `Retry-After`. Default 30 s. */
  readonly maxDelayMs?: number | undefined;
  /** POSTs in flight at once to one URL. Default 4. */
  readonly concurrency?: number | undefined;
  /** The retries' timer; default `setTimeout`, not holding a Node process open. */
  readonly schedule?: Schedule | undefined;
}
