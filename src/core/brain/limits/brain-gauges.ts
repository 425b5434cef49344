import type { Metrics } from "../../metrics/metrics.js";

/** The two gauges a brain's limiter reports. */
export type BrainGaugeMetrics = Pick<Metrics, "brainInFlight" | "brainPaused">;

/**
 * A brain's gauges over every limiter its name has had: a reload that moves a brain to another
 * server gives it a new limiter while the old one's calls finish and its pause runs out. The
 * calls in flight are those of all its limiters; the pause told is the one of the limiter the
 * brain calls now, so an old server's pause ending cannot show the brain as running while its
 * new server has paused it, nor the old pause hold the gauge while the new server is called.
 */
export interface BrainGauges {
  /** The metrics limiter `key` of brain `name` reports to, in place of `metrics`. */
  forLimiter(name: string, key: string, metrics: BrainGaugeMetrics): BrainGaugeMetrics;
  /**
   * Brain `name` calls through limiter `key` from now on (a start or an accepted reload); its
   * pause, `pausedUntil`, is told at once when the brain moved from another limiter.
   */
  select(name: string, key: string, pausedUntil: () => number | undefined): void;
}

interface LimiterGauge {
  readonly name: string;
  readonly metrics: BrainGaugeMetrics;
  inFlight: number;
}

/** Gauges for a set of limiters (see {@link BrainGauges}). */
export function createBrainGauges(): BrainGauges {
  const gauges = new Map<string, LimiterGauge>();
  const current = new Map<string, string>();
  return {
    forLimiter(name, key, metrics) {
      const gauge: LimiterGauge = { name, metrics, inFlight: 0 };
      gauges.set(key, gauge);
      return {
        brainInFlight(_brain, calls) {
          gauge.inFlight = calls;
          let total = 0;
          for (const other of gauges.values()) if (other.name === name) total += other.inFlight;
          metrics.brainInFlight(name, total);
        },
        brainPaused(_brain, paused, untilMs) {
          // Before any selection the limiter is the brain's first: its start is told.
          const selected = current.get(name);
          if (selected === undefined || selected === key) metrics.brainPaused(name, paused, untilMs);
        },
      };
    },
    select(name, key, pausedUntil) {
      const previous = current.get(name);
      current.set(name, key);
      if (previous === undefined || previous === key) return;
      const gauge = gauges.get(key);
      const until = pausedUntil();
      gauge?.metrics.brainPaused(name, until !== undefined, until);
    },
  };
}
