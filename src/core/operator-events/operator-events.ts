import type { OperatorEventInput } from "./operator-event.js";

/**
 * Where the service raises operator events (a dead letter, a receiver down or up, a brain paused
 * or resumed). `emit` returns at once and never throws: sending happens elsewhere, best-effort,
 * so raising an event can never hold up or fail a message's delivery.
 */
export interface OperatorEvents {
  emit(event: OperatorEventInput): void;
}

/** Operator events that go nowhere: the default wherever none is configured or injected. */
export const noopOperatorEvents: OperatorEvents = { emit: () => undefined };
