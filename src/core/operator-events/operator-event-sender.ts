import { errorMessage, isChannelError } from "../channel-error.js";
import { randomId, systemClock } from "../clock.js";
import { parseRetryAfterMs } from "../lifecycle/retry-policy.js";
import { redactUrl } from "../log/redact-url.js";
import { noopMetrics } from "../metrics/noop-metrics.js";
import { baseReplyHeaders, isRetryableStatus } from "../outbound/deliver-reply.js";
import type { OperatorEvent, OperatorEventInput } from "./operator-event.js";
import type { OperatorDestination, OperatorEventRoutes } from "./operator-event-routes.js";
import type { OperatorEventSenderOptions } from "./operator-event-sender-options.js";
import type { OperatorEvents } from "./operator-events.js";
import { unrefTimeout } from "./unref-timeout.js";

export type { OperatorEventSenderOptions } from "./operator-event-sender-options.js";
export type { Schedule } from "./unref-timeout.js";

/** Events kept at most (waiting for their turn or for their next attempt) when no capacity is given. */
export const DEFAULT_OPERATOR_EVENT_CAPACITY = 1_000;
/** Attempts of one event to one URL, the first included, when none are given. */
export const DEFAULT_OPERATOR_EVENT_ATTEMPTS = 5;

/** The operator events of a running service: raised by {@link OperatorEvents.emit}, sent here. */
export interface OperatorEventSender extends OperatorEvents {
  /** Swaps in the routes of a reloaded configuration; events raised before keep their destinations. */
  use(routes: OperatorEventRoutes): void;
  /** Events waiting or in flight, counted per URL. */
  readonly pending: number;
  /** Resolves once nothing waits and nothing is in flight (Workers hand it to `waitUntil`). */
  settled(): Promise<void>;
  /**
   * The end of the service: what waits is tried once more at once, for up to `timeoutMs`; what is
   * still unsent then is dropped, with a warning that counts it. Events raised later are dropped.
   */
  close(timeoutMs: number): Promise<void>;
}

/** One event on its way to one URL. */
interface Delivery {
  readonly event: OperatorEvent;
  readonly body: string;
  readonly destination: OperatorDestination;
  attempts: number;
  dueAt: number;
  /** Told as dropped at a stop while its POST was under way: what it comes to is not counted again. */
  abandoned?: true;
}

/**
 * The sender of operator events: each event is rendered once (the same bytes and `webhook-id` on
 * every attempt), signed per attempt as replies are (Standard Webhooks, `v1` and `v1a`), and
 * POSTed in the background. A failure that may pass (no answer, 408, 409, 425, 429, 5xx) is tried
 * again after a backoff, up to `maxAttempts`; any other is given up on at once, with a warning.
 * Everything is kept in memory, bounded by `capacity`: when full, the oldest event is dropped,
 * with a warning and the `dropped` metric. Nothing here ever waits on, or fails, a message's
 * delivery; a crash loses what was not sent yet.
 */
export function createOperatorEventSender(options: OperatorEventSenderOptions): OperatorEventSender {
  const { poster, logger } = options;
  const clock = options.clock ?? systemClock;
  const newId = options.newId ?? randomId;
  const random = options.random ?? Math.random;
  const metrics = options.metrics ?? noopMetrics;
  const capacity = options.capacity ?? DEFAULT_OPERATOR_EVENT_CAPACITY;
  const maxAttempts = options.maxAttempts ?? DEFAULT_OPERATOR_EVENT_ATTEMPTS;
  const initialDelayMs = options.initialDelayMs ?? 1_000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const concurrency = options.concurrency ?? 4;
  const schedule = options.schedule ?? unrefTimeout;
  const headers = baseReplyHeaders();
  let routes = options.routes;
  let waiting: Delivery[] = [];
  const sending = new Set<Delivery>();
  let closed = false;
  let timer: { readonly at: number; readonly cancel: () => void } | undefined;
  let idle: (() => void)[] = [];

  const fields = (delivery: Delivery) => ({
    type: delivery.event.type,
    event_id: delivery.event.id,
    url: redactUrl(delivery.destination.url),
  });

  const checkIdle = (): void => {
    if (waiting.length > 0 || sending.size > 0) return;
    const resolvers = idle;
    idle = [];
    for (const resolve of resolvers) resolve();
  };

  const drop = (delivery: Delivery, why: string): void => {
    metrics.operatorEvent(delivery.event.type, "dropped");
    logger.warn(`operator event dropped: ${why}`, fields(delivery));
  };

  /**
   * Drops the oldest waiting until `more` (0 or 1) fit beside what waits and is in flight; false
   * when they still do not (all that is held is in flight, with a capacity below the concurrency).
   */
  const makeRoom = (more: number): boolean => {
    while (waiting.length > 0 && waiting.length + sending.size + more > capacity) {
      // The oldest raised, a retry's place in the array notwithstanding: the newest tells the most.
      const oldest = waiting.reduce((first, delivery) =>
        delivery.event.created_at < first.event.created_at ? delivery : first,
      );
      waiting.splice(waiting.indexOf(oldest), 1);
      drop(oldest, `more than ${capacity} events wait to be sent`);
    }
    return waiting.length + sending.size + more <= capacity;
  };

  const gaveUp = (delivery: Delivery, error: string, status: number | undefined): void => {
    metrics.operatorEvent(delivery.event.type, "failed");
    logger.warn("operator event not delivered: its URL did not take it", {
      ...fields(delivery),
      attempts: delivery.attempts,
      status,
      error,
    });
  };

  /** The wait before the next attempt: full jitter under the doubling ceiling, or the URL's Retry-After. */
  const delayMs = (attempts: number, retryAfterMs: number | undefined): number => {
    if (retryAfterMs !== undefined) return Math.min(maxDelayMs, retryAfterMs);
    const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.min(attempts - 1, 30));
    return Math.floor(random() * ceiling);
  };

  /** An attempt that failed: tried again later when `retry` says it may pass and attempts are left. */
  const failed = (
    delivery: Delivery,
    error: string,
    status: number | undefined,
    retry: boolean,
    retryAfterMs?: number,
  ): void => {
    // Once the service stops, the attempt made at the stop was the last: no retry outlives it.
    if (!retry || delivery.attempts >= maxAttempts || closed) {
      gaveUp(delivery, error, status);
      return;
    }
    logger.debug("operator event attempt failed; tried again later", { ...fields(delivery), status, error });
    delivery.dueAt = clock.now() + delayMs(delivery.attempts, retryAfterMs);
    // Still counted as in flight: back in the queue, it takes that place.
    makeRoom(0);
    waiting.push(delivery);
  };

  const send = async (delivery: Delivery): Promise<void> => {
    delivery.attempts += 1;
    const { destination, event, body } = delivery;
    const timestamp = Math.floor(clock.now() / 1000);
    const signature = await destination.signer.sign(event.id, timestamp, body);
    try {
      const result = await poster.post(
        destination.url,
        body,
        { ...headers, "webhook-id": event.id, "webhook-timestamp": String(timestamp), "webhook-signature": signature },
        destination.timeoutMs,
      );
      if (delivery.abandoned === true) return;
      if (result.status >= 200 && result.status < 300) {
        metrics.operatorEvent(event.type, "sent");
        logger.debug("operator event sent", { ...fields(delivery), attempts: delivery.attempts });
        return;
      }
      const retryAfter = parseRetryAfterMs(result.retryAfter, clock.now());
      failed(delivery, `answered ${result.status}`, result.status, isRetryableStatus(result.status), retryAfter);
    } catch (error) {
      if (delivery.abandoned === true) return;
      // No answer (a timeout, a refused connection) may pass; a setting this runtime cannot use will not.
      failed(delivery, errorMessage(error), undefined, !isChannelError(error) || error.retryable);
    }
  };

  /** Fewer than `concurrency` POSTs under way to its URL: one that does not answer holds up only its own. */
  const hasRoom = (delivery: Delivery): boolean => {
    let busy = 0;
    for (const sent of sending) if (sent.destination.url === delivery.destination.url) busy += 1;
    return busy < concurrency;
  };

  const arm = (): void => {
    if (waiting.length === 0) {
      timer?.cancel();
      timer = undefined;
      return;
    }
    // A URL with all its POSTs under way sends its next event when one ends (`pump` then).
    const at = Math.min(...waiting.filter(hasRoom).map((delivery) => delivery.dueAt));
    if (at === Number.POSITIVE_INFINITY) {
      timer?.cancel();
      timer = undefined;
      return;
    }
    if (timer !== undefined && timer.at <= at) return;
    timer?.cancel();
    const cancel = schedule(
      () => {
        timer = undefined;
        pump();
      },
      Math.max(0, at - clock.now()),
    );
    timer = { at, cancel };
  };

  function pump(): void {
    const now = clock.now();
    while (sending.size < capacity) {
      const index = waiting.findIndex((delivery) => delivery.dueAt <= now && hasRoom(delivery));
      if (index < 0) break;
      const [delivery] = waiting.splice(index, 1);
      if (delivery === undefined) break;
      sending.add(delivery);
      send(delivery)
        .catch((error: unknown) => gaveUp(delivery, errorMessage(error), undefined))
        .finally(() => {
          sending.delete(delivery);
          pump();
        })
        .catch(() => undefined);
    }
    arm();
    checkIdle();
  }

  const emit = (input: OperatorEventInput): void => {
    if (routes.empty) return;
    const destinations = routes.destinationsOf(input);
    if (destinations.length === 0) return;
    const event: OperatorEvent = {
      type: input.type,
      id: `evt_${newId().replaceAll("-", "")}`,
      created_at: new Date(clock.now()).toISOString(),
      ...("channel" in input ? { channel: input.channel } : {}),
      data: input.data,
    };
    const body = JSON.stringify(event);
    for (const destination of destinations) {
      const delivery: Delivery = { event, body, destination, attempts: 0, dueAt: clock.now() };
      if (closed) {
        drop(delivery, "the service is stopping");
        continue;
      }
      // The newest tells the most of how things stand now: the oldest makes room.
      if (makeRoom(1)) waiting.push(delivery);
      else drop(delivery, `more than ${capacity} events wait to be sent`);
    }
    pump();
  };

  const settled = (): Promise<void> => {
    if (waiting.length === 0 && sending.size === 0) return Promise.resolve();
    return new Promise((resolve) => idle.push(resolve));
  };

  return {
    emit(input) {
      try {
        emit(input);
      } catch (error) {
        logger.warn(`cannot raise an operator event: ${errorMessage(error)}`, { type: input.type });
      }
    },
    use(next) {
      routes = next;
    },
    get pending() {
      return waiting.length + sending.size;
    },
    settled,
    async close(timeoutMs) {
      closed = true;
      const now = clock.now();
      for (const delivery of waiting) delivery.dueAt = Math.min(delivery.dueAt, now);
      pump();
      let cancel: (() => void) | undefined;
      await Promise.race([
        settled(),
        new Promise<void>((resolve) => {
          cancel = schedule(resolve, timeoutMs);
        }),
      ]);
      cancel?.();
      timer?.cancel();
      timer = undefined;
      const left = waiting;
      waiting = [];
      for (const delivery of left) drop(delivery, "the service stopped before it was sent");
      // Their answers would come after the stop's end, if ever: told now, and not counted again.
      for (const delivery of sending) {
        delivery.abandoned = true;
        drop(delivery, "the service stopped before its URL answered");
      }
      sending.clear();
      checkIdle();
    },
  };
}
