import type { OperatorEventInput } from "../../core/operator-events/operator-event.js";
import type { MetricEvent } from "./thread-metrics.js";

/** A brain's pause the delivery thread met: its end (epoch ms) and the status that began it. */
export interface ThreadBrainPause {
  readonly brain: string;
  readonly until: number;
  readonly status: number;
  /** When the thread met it and told it (`brain.paused`): the thread that takes it over tells its end. */
  readonly since?: number | undefined;
}

/**
 * The brains' pauses the delivery thread met, as the main thread learns them from its operator
 * events (the status and the end) and metric events (an end moved later, a pause over). A
 * thread that dies takes its limiters with it: the one that replaces it starts paused where the
 * old one was, so a brain is not called before its `Retry-After` has passed.
 */
export interface ThreadBrainPauses {
  noteEvent(event: OperatorEventInput): void;
  noteMetrics(events: readonly MetricEvent[]): void;
  /** The pauses that last past `now`. */
  current(now: number): ThreadBrainPause[];
}

/** An empty {@link ThreadBrainPauses}. */
export function createThreadBrainPauses(): ThreadBrainPauses {
  const pauses = new Map<string, { until: number; status: number; since?: number | undefined }>();
  return {
    noteEvent(event) {
      if (event.type === "brain.resumed") pauses.delete(event.brain);
      if (event.type !== "brain.paused") return;
      const until = Date.parse(event.data.until ?? "");
      if (!Number.isNaN(until)) pauses.set(event.brain, { until, status: event.data.status ?? 0, since: Date.now() });
    },
    noteMetrics(events) {
      for (const event of events) {
        if (event[0] !== "p") continue;
        const [, brain, paused, until] = event;
        if (!paused) pauses.delete(brain);
        else if (until !== undefined)
          pauses.set(brain, { ...pauses.get(brain), until, status: pauses.get(brain)?.status ?? 0 });
      }
    },
    current(now) {
      return [...pauses].filter(([, pause]) => pause.until > now).map(([brain, pause]) => ({ brain, ...pause }));
    },
  };
}
