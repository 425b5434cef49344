import type { Metrics } from "../core/metrics/metrics.js";
import { noopMetrics } from "../core/metrics/noop-metrics.js";

/** The part of a Workers Analytics Engine dataset binding that metrics use. */
export interface DataPointWriter {
  writeDataPoint(point: { blobs?: string[]; doubles?: number[]; indexes?: string[] }): void;
}

/**
 * The core's metric events as Analytics Engine data points, one per event, the same layout
 * for all (docs/operations.md gives the SQL for each Node series):
 * - `blob1` the event: `request`, `accepted`, `delivered`, `retry`, `brain_call`,
 *   `dead_letter`, `end_to_end`, `receiver_state`, `brain_paused`, `brain_tokens`,
 *   `operator_event`; `blob2` the channel (empty for `brain_paused` and `operator_event`);
 * - `blob3` the HTTP status (`request`), the brain (`brain_call`, `brain_paused`,
 *   `brain_tokens`) or the event type (`operator_event`); `blob4` `ok` or `error`
 *   (`brain_call`), `up` or `down` (`receiver_state`), `paused` or `resumed` (`brain_paused`),
 *   `prompt` or `completion` (`brain_tokens`), `sent`, `failed` or `dropped` (`operator_event`);
 * - `double1` the count (1, or the tokens of `brain_tokens`; sum `double1 * _sample_interval`
 *   for totals), `double2` seconds (`delivered`, `brain_call`, `end_to_end`);
 * - `index1` the channel, so that sampling keeps each channel's share.
 * A write never throws into the message path: the platform buffers points, and a metric
 * that cannot be written is not worth a failed request.
 */
export function createAnalyticsEngineMetrics(dataset: DataPointWriter): Metrics {
  const write = (event: string, channel: string, seconds = 0, detail = "", result = "", count = 1): void => {
    try {
      dataset.writeDataPoint({
        blobs: [event, channel, detail, result],
        doubles: [count, seconds],
        indexes: [channel],
      });
    } catch {
      // See above: metrics are best effort.
    }
  };
  const pausedBrains = new Set<string>();
  return {
    request: (channel, code) => write("request", channel, 0, String(code)),
    accepted: (channel) => write("accepted", channel),
    delivered: (channel, seconds) => write("delivered", channel, seconds),
    retry: (channel) => write("retry", channel),
    brainCall: (channel, brain, ok, seconds) => write("brain_call", channel, seconds, brain, ok ? "ok" : "error"),
    deadLetter: (channel) => write("dead_letter", channel),
    endToEnd: (channel, seconds) => write("end_to_end", channel, seconds),
    receiverState: (channel, up) => write("receiver_state", channel, 0, "", up ? "up" : "down"),
    // A gauge that changes on every call is no event worth a data point; the pause is.
    brainInFlight: () => undefined,
    brainPaused: (brain, paused) => {
      // A pause that a call in flight lengthened is reported again; one pause stays one
      // `paused` point, or summing them would count it twice. Its end is not written: the
      // `resumed` point says when it ended.
      if (paused && pausedBrains.has(brain)) return;
      if (paused) pausedBrains.add(brain);
      else pausedBrains.delete(brain);
      write("brain_paused", "", 0, brain, paused ? "paused" : "resumed");
    },
    brainTokens: (channel, brain, prompt, completion) => {
      if (prompt > 0) write("brain_tokens", channel, 0, brain, "prompt", prompt);
      if (completion > 0) write("brain_tokens", channel, 0, brain, "completion", completion);
    },
    operatorEvent: (type, outcome) => write("operator_event", "", 0, type, outcome),
  };
}

/** The metrics of a Worker environment: to the `METRICS` dataset when bound, else nowhere. */
export function metricsOf(env: Readonly<Record<string, unknown>>): Metrics {
  const binding = env.METRICS;
  if (binding !== null && typeof binding === "object" && "writeDataPoint" in binding) {
    const { writeDataPoint } = binding;
    if (typeof writeDataPoint === "function") {
      return createAnalyticsEngineMetrics({
        writeDataPoint: (point) => {
          writeDataPoint.call(binding, point);
        },
      });
    }
  }
  return noopMetrics;
}
