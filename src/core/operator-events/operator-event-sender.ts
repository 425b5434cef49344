import { errorMessage, isChannelError } from "../channel-error.js";
import { type Clock, type IdGenerator, randomId, systemClock } from "../clock.js";
import { parseRetryAfterMs } from "../lifecycle/retry-policy.js";
import type { Logger } from "../log/logger.js";
import { redactUrl } from "../log/redact-url.js";
import type { Metrics } from "../metrics/metrics.js";
import { noopMetrics } from "../metrics/noop-metrics.js";
import { baseReplyHeaders, isRetryableStatus } from "../outbound/deliver-reply.js";
import type { Poster } from "../outbound/poster.js";
import type { OperatorEvent, OperatorEventInput } from "./operator-event.js";
import type { OperatorDestination, OperatorEventRoutes } from "./operator-event-routes.js";
import type { OperatorEvents } from "./operator-events.js";

/** Events kept at most (waiting for their turn or for their next attempt) when no capacity is given. */
export const DEFAULT_OPERATOR_EVENT_CAPACITY = 1_000;
/** Attempts of one event to one URL, the first included, when none are given. */
export const DEFAULT_OPERATOR_EVENT_ATTEMPTS = 5;

/** Runs `callback` after `ms`; returns what cancels it. */
export type Schedule = (callback: () => void, ms: number) => () => void;

/** What the sender is built from; everything but the routes, poster and logger has a default. */
export interface OperatorEventSenderOptions {
  readonly routes: OperatorEventRoutes;
  /** The outbound HTTP port: `fetch` on every runtime (events are rare, and never on the hot path). */
  readonly poster: Poster;
  readonly logger: Logger;
  readonly metrics?: Pick<Metrics, "operatorEvent"> | undefined;
  readonly clock?: Clock | undefined;
  readonly newId?: IdGenerator | undefined;
  /** Uniform in [0, 1), for the retries' jitter. */
  readonly random?: (() => number) | undefined;
  /** Events kept at most; beyond, the oldest is dropped with a warning. Default {@link DEFAULT_OPERATOR_EVENT_CAPACITY}. */
  readonly capacity?: number | undefined;
  /** Attempts per event and URL. Default {@link DEFAULT_OPERATOR_EVENT_ATTEMPTS}. */
  readonly maxAttempts?: number | undefined;
  /** Ceiling of the first retry's wait, doubling per attempt (full jitter). Default 1 s. */
  readonly initialDelayMs?: number | undefined;
  /** Longest wait between attempts, and the cap on an honoured `Retry-After`. Default 30 s. */
  readonly maxDelayMs?: number | undefined;
  /** POSTs in flight at once. Default 4. */
  readonly concurrency?: number | undefined;
  /** The retries' timer; default `setTimeout`, not holding a Node process open. */
  readonly schedule?: Schedule | undefined;
}

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
  let inFlight = 0;
  let closed = false;
  let timer: { readonly at: number; readonly cancel: () => void } | undefined;
  let idle: (() => void)[] = [];

  const fields = (delivery: Delivery) => ({
    type: delivery.event.type,
    event_id: delivery.event.id,
    url: redactUrl(delivery.destination.url),
  });

  const checkIdle = (): void => {
    if (waiting.length > 0 || inFlight > 0) return;
    const resolvers = idle;
    idle = [];
    for (const resolve of resolvers) resolve();
  };

  const drop = (delivery: Delivery, why: string): void => {
    metrics.operatorEvent(delivery.event.type, "dropped");
    logger.warn(`operator event dropped: ${why}`, fields(delivery));
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
      if (result.status >= 200 && result.status < 300) {
        metrics.operatorEvent(event.type, "sent");
        logger.debug("operator event sent", { ...fields(delivery), attempts: delivery.attempts });
        return;
      }
      const retryAfter = parseRetryAfterMs(result.retryAfter, clock.now());
      failed(delivery, `answered ${result.status}`, result.status, isRetryableStatus(result.status), retryAfter);
    } catch (error) {
      // No answer (a timeout, a refused connection) may pass; a setting this runtime cannot use will not.
      failed(delivery, errorMessage(error), undefined, !isChannelError(error) || error.retryable);
    }
  };

  const arm = (): void => {
    if (waiting.length === 0) {
      timer?.cancel();
      timer = undefined;
      return;
    }
    const at = Math.min(...waiting.map((delivery) => delivery.dueAt));
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
    while (inFlight < concurrency) {
      const index = waiting.findIndex((delivery) => delivery.dueAt <= now);
      if (index < 0) break;
      const [delivery] = waiting.splice(index, 1);
      if (delivery === undefined) break;
      inFlight += 1;
      send(delivery)
        .catch((error: unknown) => gaveUp(delivery, errorMessage(error), undefined))
        .finally(() => {
          inFlight -= 1;
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
      if (waiting.length >= capacity) {
        const oldest = waiting.shift();
        if (oldest !== undefined) drop(oldest, `more than ${capacity} events wait to be sent`);
      }
      waiting.push(delivery);
    }
    pump();
  };

  const settled = (): Promise<void> => {
    if (waiting.length === 0 && inFlight === 0) return Promise.resolve();
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
      return waiting.length + inFlight;
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
      checkIdle();
    },
  };
}

const unrefTimeout: Schedule = (callback, ms) => {
  const handle = setTimeout(callback, ms);
  const held: unknown = handle;
  if (typeof held === "object" && held !== null && "unref" in held && typeof held.unref === "function") held.unref();
  return () => clearTimeout(handle);
};
