import type { AuthFailureLimit, AuthFailureLimiter } from "../auth-limit/auth-failure-limiter.js";
import type { MemoryAuthFailureLimiter } from "../auth-limit/memory-auth-failure-limiter.js";
import { type ChannelError, errorMessage, isChannelError } from "../channel-error.js";
import type { Clock, IdGenerator } from "../clock.js";
import type { ChannelConfig } from "../config/config-schema.js";
import { resolveMapping } from "../config/message-fields.js";
import { channelName } from "../config/validate-config.js";
import { parseJsonObject } from "../http/request-checks.js";
import { type RequestHead, readRequestHead } from "../http/request-head.js";
import { newTraceContext, parseTraceContext } from "../http/trace-context.js";
import type { IdempotencyStore } from "../idempotency/idempotency-store.js";
import { requestFingerprint } from "../idempotency/request-fingerprint.js";
import type { Logger } from "../log/logger.js";
import type { InboundMessage, QueuedMessage } from "../message/inbound-message.js";
import { parseMessage } from "../message/parse-message.js";
import type { Metrics } from "../metrics/metrics.js";
import { noopMetrics } from "../metrics/noop-metrics.js";
import type { Mutable } from "../mutable.js";
import { createCidrMatcher } from "../net/cidr.js";
import { resolveClientAddress } from "../net/client-address.js";
import type { AcceptedEvent } from "../timeline/timeline-event.js";
import { noTimeline, subjectOf, type TimelineRecorder } from "../timeline/timeline-recorder.js";
import { createCredentialsCheck } from "./credentials-check.js";
import { alsoNamingKey, readIdempotencyKey } from "./idempotency-key.js";
import type { InboundQueue } from "./inbound-queue.js";
import {
  bufferFullError,
  idempotencyKeyReusedError,
  requestInProgressError,
  shuttingDownError,
  unavailableError,
} from "./refusals.js";

/** The 200 body of an accepted message. */
export interface Accepted {
  readonly status: "accepted";
  readonly message_id: string;
  readonly conversation_id: string;
}

/**
 * The accept flow of one channel, in the contract's order, in two stages around the reading
 * of the body (the 1 MiB limit, check 3, is the reader's). Every refusal is a thrown (or
 * rejected) ChannelError.
 */
export interface AcceptMessage {
  /** The channel's name. */
  readonly channel: string;
  /**
   * The head of a request to this channel: its headers (a lookup by lower-case name) and the
   * client address, which is `peer` or, when `peer` is one of the channel's
   * `trusted_proxies`, taken from `X-Forwarded-For`.
   */
  readHead(header: (name: string) => string | null, peer: string | null): RequestHead;
  /**
   * Before the body is read: shutdown, the auth-failure limit of the client address, check 1
   * (Bearer; a failure is counted against the address) and check 2 (media type). Undefined
   * when it passed without waiting (always, with an in-process limiter), else a promise.
   */
  checkHead(head: RequestHead): Promise<void> | undefined;
  /**
   * With the body read: check 4 (JSON), check 5 (message), the `Idempotency-Key`, and check 6
   * (the queue). Synchronous when nothing has to wait, which spares the hot path its promises.
   */
  acceptBody(head: RequestHead, body: Uint8Array): Accepted | Promise<Accepted>;
  /**
   * Counts the answer a server gave to a request on this channel's path (`code`, its HTTP
   * status). Each server calls it once per answer, refusals included.
   */
  answered(code: number): void;
}

/** What the accept flow of one channel is built from. */
export interface AcceptDeps {
  /** The channel's inbound secrets (two while rotating), asked on every request so a reload applies at once. */
  readonly secrets: () => readonly string[];
  /** Counts failed authentications per client address, and refuses addresses over the limit. */
  readonly authFailures: AuthFailureLimiter;
  /**
   * The process's own count, in front of an `authFailures` shared by replicas or isolates, whose
   * answers come later: checked, compared and counted in one turn, so that guesses sent at once
   * cannot all be compared before any is counted. Absent when `authFailures` is the process's own.
   */
  readonly localAuthFailures?: MemoryAuthFailureLimiter | undefined;
  readonly queue: InboundQueue;
  readonly clock: Clock;
  readonly newId: IdGenerator;
  readonly logger: Logger;
  readonly idempotency?: IdempotencyStore | undefined;
  readonly isShuttingDown: () => boolean;
  /** Counts answers and accepted messages; default records nothing. */
  readonly metrics?: Metrics | undefined;
  /** Where each accepted message's timeline begins; default nowhere. */
  readonly timeline?: TimelineRecorder | undefined;
}

/**
 * Builds the accept flow of one channel. Both the Hono route and the Node fast path call it,
 * so the flow exists once.
 */
export function createAcceptMessage(channel: ChannelConfig, deps: AcceptDeps): AcceptMessage {
  const { authFailures, localAuthFailures, clock, idempotency, logger, newId, queue } = deps;
  const metrics = deps.metrics ?? noopMetrics;
  const name = channelName(channel);
  const keys = resolveMapping(channel.webhook.mapping);
  const { trusted_proxies: trustedProxies, auth_failure_limit: authLimit } = channel.webhook;
  const isTrusted = createCidrMatcher(trustedProxies);
  const limit: AuthFailureLimit = { max: authLimit.max, windowMs: authLimit.window_s * 1000 };
  const checkCredentials = createCredentialsCheck({
    channel: name,
    limit,
    secrets: deps.secrets,
    authFailures,
    localAuthFailures,
    logger,
  });
  const asChannelError = (error: unknown): ChannelError => {
    if (isChannelError(error)) return error;
    logger.error("cannot accept a message: a store is unavailable", { channel: name, error: errorMessage(error) });
    return unavailableError(error);
  };
  const timeline = deps.timeline ?? noTimeline;
  const accepted = (queued: QueuedMessage, address: string | null): Accepted => {
    metrics.accepted(name);
    if (timeline.on)
      timeline.record(subjectOf(queued), [acceptedEvent(queued, address, timeline.keepText)], "accepted");
    if (logger.enabled("debug")) {
      logger.debug("message accepted", {
        channel: name,
        message_id: queued.id,
        trace_id: queued.trace?.traceId,
        text: queued.message.text,
      });
    }
    return { status: "accepted", message_id: queued.id, conversation_id: queued.message.conversationId };
  };

  const enqueue = (queued: QueuedMessage, address: string | null): Accepted | Promise<Accepted> => {
    let pending: Promise<void> | undefined;
    try {
      pending = queue.enqueue(queued);
    } catch (error) {
      throw asChannelError(error);
    }
    if (pending === undefined) return accepted(queued, address);
    return pending.then(
      () => accepted(queued, address),
      (error: unknown) => {
        throw asChannelError(error);
      },
    );
  };

  /** The flow with an `Idempotency-Key`: reserve, queue, then commit (or release). */
  const enqueueOnce = async (
    queued: QueuedMessage,
    key: string,
    body: Uint8Array,
    store: IdempotencyStore,
    address: string | null,
  ): Promise<Accepted> => {
    const { conversationId } = queued.message;
    const fingerprint = await requestFingerprint(body);
    let earlier: Awaited<ReturnType<IdempotencyStore["reserve"]>>;
    try {
      earlier = await store.reserve(
        name,
        key,
        { messageId: queued.id, conversationId, fingerprint },
        queued.receivedAt,
      );
    } catch (error) {
      throw asChannelError(error);
    }
    const firstFingerprint = earlier?.record.fingerprint;
    if (firstFingerprint !== undefined && firstFingerprint !== fingerprint) throw idempotencyKeyReusedError();
    if (earlier?.committed === true) {
      return {
        status: "accepted",
        message_id: earlier.record.messageId,
        conversation_id: earlier.record.conversationId,
      };
    }
    if (earlier !== undefined) {
      throw requestInProgressError();
    }
    let result: Accepted;
    try {
      result = await enqueue({ ...queued, idempotencyKey: key, idempotencyFingerprint: fingerprint }, address);
    } catch (error) {
      await store.release(name, key, queued.id).catch((releaseError: unknown) => {
        logger.error("cannot release an idempotency key", { channel: name, error: errorMessage(releaseError) });
      });
      throw error;
    }
    // The message is queued and its 200 is owed whatever happens here; a key left pending
    // expires with its lease.
    await store.commit(name, key, queued.id, clock.now()).catch((commitError: unknown) => {
      logger.error("cannot commit an idempotency key", { channel: name, error: errorMessage(commitError) });
    });
    return result;
  };

  return {
    channel: name,
    answered(code) {
      metrics.request(name, code);
    },
    readHead(header, peer) {
      const address =
        trustedProxies.length === 0 ? peer : resolveClientAddress(peer, header("x-forwarded-for"), isTrusted);
      return readRequestHead(header, address);
    },
    checkHead(head) {
      if (deps.isShuttingDown()) throw shuttingDownError();
      return checkCredentials(head);
    },
    acceptBody(head, body) {
      // A stop that began while the body was arriving refuses it like a new request (check 1).
      if (deps.isShuttingDown()) throw shuttingDownError();
      let message: InboundMessage;
      try {
        message = parseMessage(parseJsonObject(body), keys);
      } catch (error) {
        throw alsoNamingKey(error, head.idempotencyKey, idempotency);
      }
      const key = readIdempotencyKey(head.idempotencyKey, idempotency);
      const refused = queue.refusal?.();
      if (refused !== undefined) throw refused;
      // A key may name a message accepted before, whose 200 a full buffer does not change.
      if (key === undefined && queue.hasRoom?.() === false) throw bufferFullError();
      const trace = parseTraceContext(head.traceparent, head.tracestate) ?? newTraceContext();
      const queued: QueuedMessage = { id: newId(), channel: name, receivedAt: clock.now(), message, trace };
      if (key !== undefined && idempotency !== undefined) {
        return enqueueOnce(queued, key, body, idempotency, head.clientAddress);
      }
      return enqueue(queued, head.clientAddress);
    },
  };
}

/** The first event of a message's timeline; its text only when the operator keeps text. */
function acceptedEvent(queued: QueuedMessage, address: string | null, keepText: boolean): AcceptedEvent {
  // Built field by field: this runs for every accepted message.
  const event: Mutable<AcceptedEvent> = { type: "accepted", at: queued.receivedAt };
  if (address !== null) event.client_address = address;
  if (queued.idempotencyKey !== undefined) event.idempotency_key = queued.idempotencyKey;
  if (keepText && queued.message.text !== undefined) event.text = queued.message.text;
  return event;
}
