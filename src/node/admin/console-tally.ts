import type { BrainStatus, ChannelCounts } from "../../core/admin/status-report.js";
import { isoOrNull } from "../../core/admin/status-report.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { noopMetrics } from "../../core/metrics/noop-metrics.js";
import type { JobQueueEvent } from "../queue/job-queue-options.js";

/** What the console counts on Node while the service runs. */
export interface ConsoleTally {
  /** Epoch ms the counts start from. */
  readonly since: number;
  /** Counts one event of a channel's job queue (its `onEvent`), as the `progress` line does. */
  record(channel: string, event: JobQueueEvent): void;
  /**
   * The consumer's metrics, with the brains' calls in flight and pauses also noted here: the
   * limiters report them through `Metrics` (from the delivery thread too), and nowhere else.
   */
  watching(metrics: Metrics | undefined): Metrics | undefined;
  /** A channel's counts since {@link since}. */
  counts(channel: string): ChannelCounts;
  /** Every brain a limiter reported, by name. */
  brains(): BrainStatus[];
}

const NO_COUNTS: ChannelCounts = { accepted: 0, delivered: 0, retrying: 0, dead_lettered: 0 };

/**
 * The console's counts since start, per channel: messages accepted, delivered (every reply
 * delivered), retrying (attempts that will be tried again) and dead-lettered; and per brain the
 * calls in flight, and when its pause began and when it ends. Without `admin` (`enabled` false)
 * it counts nothing and hands the metrics through untouched, so the hot path is as it was.
 */
export function createConsoleTally(enabled: boolean, now: () => number): ConsoleTally {
  const since = now();
  const channels = new Map<string, { accepted: number; delivered: number; retrying: number; dead_lettered: number }>();
  const brains = new Map<
    string,
    { inFlight: number; pausedSince: number | undefined; pausedUntil: number | undefined }
  >();
  const brain = (name: string) => {
    let entry = brains.get(name);
    if (entry === undefined) {
      entry = { inFlight: 0, pausedSince: undefined, pausedUntil: undefined };
      brains.set(name, entry);
    }
    return entry;
  };
  return {
    since,
    record(channel, event) {
      if (!enabled) return;
      let counts = channels.get(channel);
      if (counts === undefined) {
        counts = { ...NO_COUNTS };
        channels.set(channel, counts);
      }
      if (event === "accepted") counts.accepted += 1;
      else if (event === "done") counts.delivered += 1;
      else if (event === "retry") counts.retrying += 1;
      else if (event === "dead") counts.dead_lettered += 1;
    },
    watching(metrics) {
      if (!enabled) return metrics;
      const inner = metrics ?? noopMetrics;
      return {
        ...bound(inner),
        brainInFlight(name, calls) {
          brain(name).inFlight = calls;
          inner.brainInFlight(name, calls);
        },
        brainPaused(name, paused, untilMs) {
          const entry = brain(name);
          if (!paused) {
            entry.pausedSince = undefined;
            entry.pausedUntil = undefined;
          } else {
            // A lengthened pause is reported again: it keeps its start and takes the new end.
            entry.pausedSince ??= now();
            entry.pausedUntil = untilMs ?? entry.pausedUntil;
          }
          inner.brainPaused(name, paused, untilMs);
        },
      };
    },
    counts: (channel) => ({ ...(channels.get(channel) ?? NO_COUNTS) }),
    brains: () =>
      [...brains].map(([name, entry]) => ({
        brain: name,
        in_flight: entry.inFlight,
        paused: entry.pausedSince !== undefined,
        paused_since: isoOrNull(entry.pausedSince),
        paused_until: isoOrNull(entry.pausedUntil),
      })),
  };
}

/** The methods of `metrics` bound to it, so that a spread copy calls them correctly. */
function bound(metrics: Metrics): Metrics {
  return {
    request: (channel, code) => metrics.request(channel, code),
    accepted: (channel) => metrics.accepted(channel),
    delivered: (channel, seconds) => metrics.delivered(channel, seconds),
    retry: (channel) => metrics.retry(channel),
    brainCall: (channel, name, ok, seconds) => metrics.brainCall(channel, name, ok, seconds),
    deadLetter: (channel) => metrics.deadLetter(channel),
    endToEnd: (channel, seconds) => metrics.endToEnd(channel, seconds),
    receiverState: (channel, up) => metrics.receiverState(channel, up),
    brainInFlight: (name, calls) => metrics.brainInFlight(name, calls),
    brainPaused: (name, paused, untilMs) => metrics.brainPaused(name, paused, untilMs),
    brainTokens: (channel, name, prompt, completion) => metrics.brainTokens(channel, name, prompt, completion),
    operatorEvent: (type, outcome) => metrics.operatorEvent(type, outcome),
  };
}
