import type { Clock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import { channelName } from "../../core/config/validate-config.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { StateBackend } from "../state/state-backend.js";
import { createPrometheusMetrics, type PrometheusMetrics } from "./prometheus-metrics.js";
import { registerSharedBacklog } from "./shared-backlog-gauge.js";

/**
 * The service's metrics, or undefined when `observability.metrics` is false. The gauges read
 * `queues` at scrape time (it is filled after this is built). Dead letters stored now come from
 * the state database with `state_dir`; without one nothing is stored past the log line, so
 * the gauge shows the queue's count since start. With several replicas on Postgres, what they
 * share (stored dead letters, the shared backlog) is reported by one of them, `shared`.
 */
export function createServiceMetrics(
  config: Config,
  queues: ReadonlyMap<string, JobQueue>,
  state: Pick<StateBackend, "storedDeadLetters">,
  clock: Clock,
  shared?: { readonly sharedBacklog: () => ReadonlyMap<string, number> | undefined },
): PrometheusMetrics | undefined {
  if (!config.observability.metrics) return undefined;
  const channels = config.channels.map(channelName);
  const metrics = createPrometheusMetrics({
    channels,
    queues: () => queues,
    now: () => clock.now(),
    storedDeadLetters: () => {
      // Not the reporting replica: 0 here, the count is on the one that reports.
      if (shared !== undefined && shared.sharedBacklog() === undefined) return new Map();
      const stored = state.storedDeadLetters();
      if (stored !== undefined) return new Map(stored);
      return new Map([...queues].map(([name, queue]) => [name, queue.deadLetters]));
    },
  });
  if (shared !== undefined) registerSharedBacklog(metrics.registry, channels, shared.sharedBacklog);
  return metrics;
}
