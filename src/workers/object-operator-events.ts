import { createOperatorEventSender, type OperatorEventSender } from "../core/operator-events/operator-event-sender.js";
import type { OperatorEvents } from "../core/operator-events/operator-events.js";
import type { EnvironmentParts } from "./environment-parts.js";

/** A Durable Object's operator events under one environment's parts. */
export interface BoundOperatorEvents extends OperatorEvents {
  /**
   * Sends the brain events the isolate kept meanwhile, and keeps the object alive (`waitUntil`)
   * while anything it raised is still to be sent.
   */
  settle(): void;
}

/**
 * The operator events of one Durable Object: a sender of its own, over the routes of the isolate's
 * parts, since the I/O of a POST (and the retries' timers) belongs to the object that started it
 * and cannot be shared with the isolate's other objects. A new configuration (new parts) gets a
 * new sender; events raised under the old one are still sent by it.
 */
export class ObjectOperatorEvents {
  private current: { readonly parts: EnvironmentParts; readonly sender: OperatorEventSender } | undefined;

  constructor(private readonly waitUntil: (promise: Promise<unknown>) => void) {}

  /** The object's events under `parts`. */
  bound(parts: EnvironmentParts): BoundOperatorEvents {
    if (this.current?.parts !== parts) {
      const { operatorRoutes: routes, poster, logger, metrics } = parts;
      this.current = { parts, sender: createOperatorEventSender({ routes, poster, logger, metrics }) };
    }
    const { sender } = this.current;
    return {
      emit: (event) => sender.emit(event),
      settle: () => {
        for (const event of parts.brainEvents.drain()) sender.emit(event);
        if (sender.pending > 0) this.waitUntil(sender.settled());
      },
    };
  }
}
