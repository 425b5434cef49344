import type { Config } from "../../core/config/config-schema.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import type { OperatorEvents } from "../../core/operator-events/operator-events.js";

/** Where the delivery thread comes from and what it sees. */
export interface DeliveryThreadOptions {
  /** The thread's module: dist/delivery-worker.js next to dist/node.js. */
  readonly entry: URL;
  readonly config: Config;
  /** The thread's environment, for the `*_env` variables of brains and delivery. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The main thread's logger; the thread's lines come out here. */
  readonly logger: Logger;
  /** Where the thread's metric events are recorded; without it they are dropped. */
  readonly metrics?: Metrics | undefined;
  /** Where the thread's operator events (its brains' pauses) are sent from; without it they are dropped. */
  readonly operatorEvents?: OperatorEvents | undefined;
}
