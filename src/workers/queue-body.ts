import type { InboundMessage, QueuedMessage } from "../core/message/inbound-message.js";

/**
 * Where a message too large for a queue message (Cloudflare's limit is 128 KB) waits: in the
 * Durable Object of its conversation, under its id. The queue carries only this reference.
 */
export interface StoredMessageRef {
  readonly stored: {
    readonly id: string;
    readonly channel: string;
    readonly conversationId: string;
  };
}

/** The body of an inbound queue message: the accepted message itself, or a reference to it. */
export type InboundBody = QueuedMessage | StoredMessageRef;

/** Why a message became a dead letter, as the inbound consumer saw it. */
export interface DeadLetterReason {
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * The body the inbound consumer sends to the dead-letter queue. Messages that the platform
 * moves there itself (after `max_retries`) arrive as a bare {@link InboundBody} instead.
 */
export interface DeadLetterBody {
  readonly deadLetter: {
    readonly body: InboundBody;
    readonly reason: DeadLetterReason;
    /** Delivery attempts made, the failed last one included. */
    readonly attempts: number;
    /** Epoch milliseconds of the last failure. */
    readonly failedAt: number;
    /** Id of the inbound queue message, as the platform's logs show it. */
    readonly queueMessageId: string;
  };
}

/** The conversation a body belongs to, as the key of its lane in a batch. */
export function bodyConversation(body: InboundBody): { channel: string; conversationId: string } {
  if ("stored" in body) return { channel: body.stored.channel, conversationId: body.stored.conversationId };
  return { channel: body.channel, conversationId: body.message.conversationId };
}

/** The message id a body carries, inline or stored. */
export function bodyMessageId(body: InboundBody): string {
  return "stored" in body ? body.stored.id : body.id;
}

/**
 * Checks an inbound queue body. Queue bodies cross a process boundary and outlive
 * deployments, so they are checked rather than trusted; undefined means unusable.
 */
export function readInboundBody(value: unknown): InboundBody | undefined {
  if (!isRecord(value)) return undefined;
  if ("stored" in value) {
    const stored = value.stored;
    if (!isRecord(stored)) return undefined;
    const { id, channel, conversationId } = stored;
    if (typeof id !== "string" || typeof channel !== "string" || typeof conversationId !== "string") return undefined;
    return { stored: { id, channel, conversationId } };
  }
  return readQueuedMessage(value);
}

/** Checks a dead-letter queue body: one the consumer sent, or a bare inbound body. */
export function readDeadLetterBody(value: unknown): DeadLetterBody | InboundBody | undefined {
  if (isRecord(value) && "deadLetter" in value) {
    const letter = value.deadLetter;
    if (!isRecord(letter)) return undefined;
    const body = readInboundBody(letter.body);
    const reason = letter.reason;
    if (body === undefined || !isRecord(reason)) return undefined;
    return {
      deadLetter: {
        body,
        reason: {
          code: String(reason.code),
          message: String(reason.message),
          retryable: reason.retryable === true,
          details: isRecord(reason.details) ? reason.details : {},
        },
        attempts: typeof letter.attempts === "number" ? letter.attempts : 0,
        failedAt: typeof letter.failedAt === "number" ? letter.failedAt : 0,
        queueMessageId: typeof letter.queueMessageId === "string" ? letter.queueMessageId : "",
      },
    };
  }
  return readInboundBody(value);
}

/** Checks a serialized {@link QueuedMessage}; undefined when it is not one. */
export function readQueuedMessage(value: unknown): QueuedMessage | undefined {
  if (!isRecord(value)) return undefined;
  const { id, channel, receivedAt, message } = value;
  if (typeof id !== "string" || typeof channel !== "string" || typeof receivedAt !== "number") return undefined;
  if (!isRecord(message)) return undefined;
  const { senderId, conversationId } = message;
  if (typeof senderId !== "string" || typeof conversationId !== "string") return undefined;
  const inbound: { -readonly [K in keyof InboundMessage]: InboundMessage[K] } = { senderId, conversationId };
  for (const key of ["senderName", "text", "mediaUrl", "mediaType"] as const) {
    const field = message[key];
    if (typeof field === "string") inbound[key] = field;
    else if (field !== undefined) return undefined;
  }
  return { id, channel, receivedAt, message: inbound };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
