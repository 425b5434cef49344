import type { Clock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import { channelName } from "../../core/config/validate-config.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { StateBackend } from "../state/state-backend.js";
import { createPrometheusMetrics, type PrometheusMetrics } from "./prometheus-metrics.js";

/**
 * The service's metrics, or undefined when `observability.metrics` is false. The gauges read
 * `queues` at scrape time (it is filled after this is built). Dead letters stored now come from
 * the state database with `state_dir`; without one nothing is stored past the log line, so
 * the gauge shows the queue's count since start.
 */
export function createServiceMetrics(
  config: Config,
  queues: ReadonlyMap<string, JobQueue>,
  state: Pick<StateBackend, "storedDeadLetters">,
  clock: Clock,
): PrometheusMetrics | undefined {
  if (!config.observability.metrics) return undefined;
  return createPrometheusMetrics({
    channels: config.channels.map(channelName),
    queues: () => queues,
    now: () => clock.now(),
    storedDeadLetters: () => {
      const stored = state.storedDeadLetters();
      if (stored !== undefined) return new Map(stored);
      return new Map([...queues].map(([name, queue]) => [name, queue.deadLetters]));
    },
  });
}
