import type { Metrics } from "../../core/metrics/metrics.js";

/**
 * One metric event as it crosses from the delivery thread to the main thread: a short tuple,
 * so that the structured clone of a batch stays small at thousands of messages per second.
 */
export type MetricEvent =
  | readonly ["d", string, number]
  | readonly ["r", string]
  | readonly ["b", string, string, boolean, number]
  | readonly ["x", string]
  | readonly ["e", string, number]
  | readonly ["u", string, boolean]
  | readonly ["f", string, number]
  | readonly ["p", string, boolean, number | undefined]
  | readonly ["t", string, string, number, number];

/**
 * The delivery thread's Metrics: each event becomes a {@link MetricEvent} for `push` (the
 * thread's batched outbox), applied on the main thread by {@link applyMetricEvents}. Requests
 * and acceptances never happen on the thread, so they are not sent.
 */
export function createThreadMetrics(push: (event: MetricEvent) => void): Metrics {
  return {
    request: () => undefined,
    accepted: () => undefined,
    delivered: (channel, seconds) => push(["d", channel, seconds]),
    retry: (channel) => push(["r", channel]),
    brainCall: (channel, brain, ok, seconds) => push(["b", channel, brain, ok, seconds]),
    deadLetter: (channel) => push(["x", channel]),
    endToEnd: (channel, seconds) => push(["e", channel, seconds]),
    receiverState: (channel, up) => push(["u", channel, up]),
    brainInFlight: (brain, calls) => push(["f", brain, calls]),
    // The pause's end crosses too: the console on the main thread shows it.
    brainPaused: (brain, paused, untilMs) => push(["p", brain, paused, untilMs]),
    brainTokens: (channel, brain, prompt, completion) => push(["t", channel, brain, prompt, completion]),
    // Operator events are sent from the main thread only (the thread hands its events over).
    operatorEvent: () => undefined,
  };
}

/** Records the delivery thread's events in the main thread's metrics. */
export function applyMetricEvents(metrics: Metrics, events: readonly MetricEvent[]): void {
  for (const event of events) {
    switch (event[0]) {
      case "d":
        metrics.delivered(event[1], event[2]);
        break;
      case "r":
        metrics.retry(event[1]);
        break;
      case "b":
        metrics.brainCall(event[1], event[2], event[3], event[4]);
        break;
      case "x":
        metrics.deadLetter(event[1]);
        break;
      case "e":
        metrics.endToEnd(event[1], event[2]);
        break;
      case "u":
        metrics.receiverState(event[1], event[2]);
        break;
      case "f":
        metrics.brainInFlight(event[1], event[2]);
        break;
      case "p":
        metrics.brainPaused(event[1], event[2], event[3]);
        break;
      case "t":
        metrics.brainTokens(event[1], event[2], event[3], event[4]);
        break;
    }
  }
}
