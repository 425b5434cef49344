import type { Clock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import { channelName } from "../../core/config/validate-config.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { StateDb } from "../state/sqlite-state.js";
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
  db: StateDb | undefined,
  clock: Clock,
): PrometheusMetrics | undefined {
  if (!config.observability.metrics) return undefined;
  const countStored = db?.prepare<[], { channel: string; n: number }>(
    "SELECT channel, count(*) AS n FROM dead_letters GROUP BY channel",
  );
  return createPrometheusMetrics({
    channels: config.channels.map(channelName),
    queues: () => queues,
    now: () => clock.now(),
    storedDeadLetters: () => {
      const counts = new Map<string, number>();
      if (countStored === undefined) for (const [name, queue] of queues) counts.set(name, queue.deadLetters);
      else for (const { channel, n } of countStored.all()) counts.set(channel, n);
      return counts;
    },
  });
}
