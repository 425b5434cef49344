import type { OperatorEventInput } from "../core/operator-events/operator-event.js";
import type { OperatorEvents } from "../core/operator-events/operator-events.js";

/** Brain events kept at most between two runs of the isolate's objects; beyond, the oldest go. */
const CAPACITY = 100;

/**
 * The operator events of the isolate's brains (a pause met, its end), kept as plain data until
 * a Durable Object of the isolate sends them with its own sender: the brains' limiters serve every
 * object of the isolate, and a request that one object's I/O started cannot be awaited by another.
 */
export class BufferedOperatorEvents implements OperatorEvents {
  private events: OperatorEventInput[] = [];

  emit(event: OperatorEventInput): void {
    if (this.events.length >= CAPACITY) this.events.shift();
    this.events.push(event);
  }

  /** The events raised since the last call, oldest first. */
  drain(): OperatorEventInput[] {
    const drained = this.events;
    this.events = [];
    return drained;
  }
}
