import { readTraceContext } from "../core/http/trace-context.js";
import { isRecord } from "../core/is-record.js";
import type { Job, JobError, PendingReply } from "../core/lifecycle/job.js";
import type { JobKey } from "../core/lifecycle/pending-job-store.js";
import type { InboundMessage, QueuedMessage } from "../core/message/inbound-message.js";
import type { Mutable } from "../core/mutable.js";

/**
 * Where a job waits in the Durable Object of its conversation, under its message id: used
 * for messages too large for a queue message (Cloudflare's limit is 128 KB) and for dead
 * letters too large for one.
 */
export interface StoredJobRef {
  readonly stored: JobKey;
}

/** The body of an inbound queue message: the accepted message itself, or where it is stored. */
export type InboundBody = QueuedMessage | StoredJobRef;

/**
 * The body the inbound consumer sends to the dead-letter queue: the core's dead letter, with
 * the job inline or, when too large, in its conversation's Durable Object. Messages that the
 * platform moves there itself (after `max_retries`) arrive as a bare {@link InboundBody}.
 */
export interface DeadLetterBody {
  readonly deadLetter: {
    readonly job: Job | StoredJobRef;
    readonly error: JobError;
    /** Failed attempts of the step that died. */
    readonly attempts: number;
    /** Epoch ms. */
    readonly diedAt: number;
  };
}

/**
 * Largest serialized body sent inline, in bytes. Cloudflare Queues refuse messages over
 * 128 KB; the margin covers the platform's own envelope. The endpoint accepts bodies up to
 * 1 MiB, so anything larger waits in its conversation's Durable Object instead.
 */
export const INLINE_BODY_LIMIT = 96_000;

const encoder = new TextEncoder();

/** True when `value`, as JSON, fits in a queue message. */
export function fitsInline(value: unknown): boolean {
  return encoder.encode(JSON.stringify(value)).byteLength <= INLINE_BODY_LIMIT;
}

/** The message id and conversation a body belongs to. */
export function bodyRef(body: InboundBody): StoredJobRef {
  if ("stored" in body) return body;
  return { stored: { id: body.id, channel: body.channel, conversationId: body.message.conversationId } };
}

/**
 * Checks an inbound queue body. Queue bodies cross process boundaries and outlive
 * deployments, so they are checked rather than trusted; undefined means unusable.
 */
export function readInboundBody(value: unknown): InboundBody | undefined {
  return readStoredJobRef(value) ?? readQueuedMessage(value);
}

/** Checks a dead-letter queue body: one the consumer sent, or a bare inbound body. */
export function readDeadLetterBody(value: unknown): DeadLetterBody | InboundBody | undefined {
  if (!isRecord(value) || !("deadLetter" in value)) return readInboundBody(value);
  const letter = value.deadLetter;
  if (!isRecord(letter)) return undefined;
  const job = readStoredJobRef(letter.job) ?? readJob(letter.job);
  const error = readJobError(letter.error);
  const { attempts, diedAt } = letter;
  if (job === undefined || error === undefined || typeof attempts !== "number" || typeof diedAt !== "number") {
    return undefined;
  }
  return { deadLetter: { job, error, attempts, diedAt } };
}

/** Checks a serialized core {@link Job}; undefined when it is not one. */
export function readJob(value: unknown): Job | undefined {
  if (!isRecord(value)) return undefined;
  const message = readQueuedMessage(value.message);
  const { delivered, attempts, stepStartedAt } = value;
  if (message === undefined || typeof delivered !== "number" || typeof attempts !== "number") return undefined;
  const job: Mutable<Job> = { message, delivered, attempts };
  if (value.replies !== undefined) {
    if (!Array.isArray(value.replies)) return undefined;
    const replies: PendingReply[] = [];
    for (const reply of value.replies as unknown[]) {
      if (!isRecord(reply)) return undefined;
      const { id, sequence, body } = reply;
      if (typeof id !== "string" || typeof sequence !== "number" || typeof body !== "string") return undefined;
      replies.push({ id, sequence, body });
    }
    job.replies = replies;
  }
  if (typeof stepStartedAt === "number") job.stepStartedAt = stepStartedAt;
  if (value.renumber === true) job.renumber = true;
  const lastError = readJobError(value.lastError);
  if (lastError !== undefined) job.lastError = lastError;
  return job;
}

/**
 * A job as a Durable Object stores it (JSON: a lane row, a parked job), or undefined when it
 * cannot be read; the caller drops it with a log line rather than failing the object.
 */
export function readStoredJob(json: string): Job | undefined {
  try {
    return readJob(JSON.parse(json));
  } catch {
    return undefined;
  }
}

/** Checks a serialized {@link QueuedMessage}; undefined when it is not one. */
export function readQueuedMessage(value: unknown): QueuedMessage | undefined {
  if (!isRecord(value)) return undefined;
  const { id, channel, receivedAt, message, idempotencyKey, trace } = value;
  if (typeof id !== "string" || typeof channel !== "string" || typeof receivedAt !== "number") return undefined;
  if (!isRecord(message)) return undefined;
  const { senderId, conversationId } = message;
  if (typeof senderId !== "string" || typeof conversationId !== "string") return undefined;
  const inbound: Mutable<InboundMessage> = { senderId, conversationId };
  for (const key of ["senderName", "text", "mediaUrl", "mediaType"] as const) {
    const field = message[key];
    if (typeof field === "string") inbound[key] = field;
    else if (field !== undefined) return undefined;
  }
  const context = readTraceContext(trace);
  const queued: QueuedMessage = {
    id,
    channel,
    receivedAt,
    message: inbound,
    ...(context === undefined ? {} : { trace: context }),
  };
  return typeof idempotencyKey === "string" ? { ...queued, idempotencyKey } : queued;
}

function readStoredJobRef(value: unknown): StoredJobRef | undefined {
  if (!isRecord(value) || !isRecord(value.stored)) return undefined;
  const { id, channel, conversationId } = value.stored;
  if (typeof id !== "string" || typeof channel !== "string" || typeof conversationId !== "string") return undefined;
  return { stored: { id, channel, conversationId } };
}

function readJobError(value: unknown): JobError | undefined {
  if (!isRecord(value)) return undefined;
  const { code, message, retryable, status, detail } = value;
  if (typeof code !== "string" || typeof message !== "string" || typeof retryable !== "boolean") return undefined;
  return {
    code,
    message,
    retryable,
    ...(typeof status === "number" ? { status } : {}),
    ...(typeof detail === "string" ? { detail } : {}),
  };
}
