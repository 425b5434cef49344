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

/** The part of a Durable Object's state that its operator events use. */
export interface ObjectState {
  waitUntil(promise: Promise<unknown>): void;
}

/** Each object's sender, and the parts it was made for. */
const senders = new WeakMap<ObjectState, { readonly parts: EnvironmentParts; readonly sender: OperatorEventSender }>();

/**
 * The operator events of the Durable Object whose state is `state`, under `parts`: a sender of its
 * own, over the routes of the isolate's parts, since the I/O of a POST (and the retries' timers)
 * belongs to the object that started it and cannot be shared with the isolate's other objects. A
 * new configuration (new parts) gets a new sender; events raised under the old one are still sent.
 */
export function operatorEventsOf(state: ObjectState, parts: EnvironmentParts): BoundOperatorEvents {
  let current = senders.get(state);
  if (current?.parts !== parts) {
    const { operatorRoutes: routes, poster, logger, metrics } = parts;
    current = { parts, sender: createOperatorEventSender({ routes, poster, logger, metrics }) };
    senders.set(state, current);
  }
  const { sender } = current;
  return {
    emit: (event) => sender.emit(event),
    settle: () => {
      for (const event of parts.brainEvents.drain()) sender.emit(event);
      if (sender.pending > 0) state.waitUntil(sender.settled());
    },
  };
}
