import type { Logger } from "../core/log/logger.js";
import type { Metrics } from "../core/metrics/metrics.js";
import type { OperatorEventInput } from "../core/operator-events/operator-event.js";
import type { OperatorEvents } from "../core/operator-events/operator-events.js";

/** Brain events kept at most between two runs of the isolate's objects; beyond, the oldest go. */
export const BRAIN_EVENT_CAPACITY = 100;

/**
 * The operator events of the isolate's brains (a pause met, its end), kept as plain data until
 * a Durable Object of the isolate sends them with its own sender: the brains' limiters serve every
 * object of the isolate, and a request that one object's I/O started cannot be awaited by another.
 * An event that does not fit is dropped as the sender drops one: with a warning and the
 * `dropped` metric, so an operator learns that events were lost.
 */
export class BufferedOperatorEvents implements OperatorEvents {
  private events: OperatorEventInput[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {}

  emit(event: OperatorEventInput): void {
    const oldest = this.events.length >= BRAIN_EVENT_CAPACITY ? this.events.shift() : undefined;
    if (oldest !== undefined) {
      this.metrics.operatorEvent(oldest.type, "dropped");
      this.logger.warn(`operator event dropped: more than ${BRAIN_EVENT_CAPACITY} brain events wait to be sent`, {
        type: oldest.type,
        brain: "brain" in oldest ? oldest.brain : undefined,
      });
    }
    this.events.push(event);
  }

  /** The events raised since the last call, oldest first. */
  drain(): OperatorEventInput[] {
    const drained = this.events;
    this.events = [];
    return drained;
  }
}
