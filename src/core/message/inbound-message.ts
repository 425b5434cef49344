import type { TraceContext } from "../http/trace-context.js";

/** A validated inbound message, in the service's own field names. */
export interface InboundMessage {
  readonly senderId: string;
  readonly senderName?: string;
  readonly text?: string;
  readonly mediaUrl?: string;
  readonly mediaType?: string;
  /** The client's `conversation_id`, or the sender id when it sent none. */
  readonly conversationId: string;
}

/**
 * An accepted message as it travels through a queue. Plain JSON, so it survives
 * Cloudflare Queues, SQLite or any other transport unchanged.
 */
export interface QueuedMessage {
  /** The `message_id` returned in the 200. */
  readonly id: string;
  /** Name of the channel that accepted it. */
  readonly channel: string;
  /** Epoch milliseconds of acceptance. */
  readonly receivedAt: number;
  readonly message: InboundMessage;
  /** The client's `Idempotency-Key`, kept so a durable queue commits it with the message. */
  readonly idempotencyKey?: string;
  /** The request's fingerprint kept with that key, so that a reuse with another body is refused. */
  readonly idempotencyFingerprint?: string;
  /** The W3C trace the message belongs to: the client's `traceparent`, or one made at accept time. */
  readonly trace?: TraceContext;
}
