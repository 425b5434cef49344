import type { DeadLetter } from "../dead-letters/dead-letter.js";
import type { LogFields } from "../log/logger.js";
import { redactUrl } from "../log/redact-url.js";
import type { CircuitChange, CircuitState } from "../receiver/receiver-circuit.js";

/**
 * The operator events, by `type`. Names say what happened to what, as a team that routes them
 * to a pager or a chat room would filter on them; none is ever renamed.
 */
export const OPERATOR_EVENT_TYPES = [
  "message.dead_lettered",
  "receiver.down",
  "receiver.up",
  "brain.paused",
  "brain.resumed",
] as const;

/** One operator event's type. */
export type OperatorEventType = (typeof OPERATOR_EVENT_TYPES)[number];

/** `message.dead_lettered`: what to find and replay the message by; never its text or its replies. */
export interface DeadLetteredData {
  readonly message_id: string;
  readonly conversation_id: string;
  readonly trace_id?: string | undefined;
  /** What failed: asking the brain, or delivering a reply. */
  readonly step: "brain" | "delivery";
  readonly error_code: string;
  readonly error: string;
  /** The upstream HTTP status of the last attempt, when there was one. */
  readonly status?: number | undefined;
  /** Why it was given up on (not retryable, attempts exhausted, too old). */
  readonly reason?: string | undefined;
  readonly attempts: number;
  readonly received_at: string;
  readonly died_at: string;
  /** How to replay it (a command, or where it is kept), as the dead letter's log line says. */
  readonly replay?: string | undefined;
}

/** `receiver.down` and `receiver.up`: the channel's receiver, its URL without credentials or query. */
export interface ReceiverData {
  readonly outbound_url: string;
  /** Unanswered POSTs in a row that took it down (`receiver.down`). */
  readonly failures?: number | undefined;
  /** When its first probe may go (`receiver.down`). */
  readonly next_probe_at?: string | undefined;
  /** How long it was down (`receiver.up`, when known). */
  readonly down_ms?: number | undefined;
}

/** `brain.paused` and `brain.resumed`. */
export interface BrainData {
  readonly brain: string;
  /** The status its server answered (429 or 503): `brain.paused`. */
  readonly status?: number | undefined;
  /** When the pause ends (`brain.paused`). */
  readonly until?: string | undefined;
  /** How long it was paused (`brain.resumed`). */
  readonly paused_ms?: number | undefined;
}

/**
 * An event as the service raises it; the sender adds its `id` and `created_at`. Channel events
 * go to the channel's destination; brain events to that of every channel whose route asks the
 * brain (directly or as a fallback).
 */
export type OperatorEventInput =
  | { readonly type: "message.dead_lettered"; readonly channel: string; readonly data: DeadLetteredData }
  | { readonly type: "receiver.down" | "receiver.up"; readonly channel: string; readonly data: ReceiverData }
  | { readonly type: "brain.paused" | "brain.resumed"; readonly brain: string; readonly data: BrainData };

/** The JSON body POSTed to an operator URL. */
export interface OperatorEvent {
  readonly type: OperatorEventType;
  /** `evt_…`, also the request's `webhook-id`: the same on every attempt, so receivers drop a repeat. */
  readonly id: string;
  readonly created_at: string;
  /** The channel, for channel events. */
  readonly channel?: string;
  readonly data: DeadLetteredData | ReceiverData | BrainData;
}

/**
 * The `message.dead_lettered` event of a stored dead letter; `fields` is its log line's (see
 * `deadLetterFields`), whose `reason` and `replay` it repeats.
 */
export function deadLetteredEvent(letter: DeadLetter, fields: LogFields): OperatorEventInput {
  const { job, error } = letter;
  const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
  return {
    type: "message.dead_lettered",
    channel: job.message.channel,
    data: {
      message_id: job.message.id,
      conversation_id: job.message.message.conversationId,
      trace_id: job.message.trace?.traceId,
      step: job.replies === undefined ? "brain" : "delivery",
      error_code: error.code,
      error: error.message,
      status: error.status,
      reason: text(fields.reason),
      attempts: letter.attempts,
      received_at: new Date(job.message.receivedAt).toISOString(),
      died_at: new Date(letter.diedAt).toISOString(),
      replay: text(fields.replay),
    },
  };
}

/**
 * `receiver.down` or `receiver.up` of `channel`, whose receiver is `outboundUrl`, from the
 * circuit's new `state` (and, for `up`, the state it left, when the runtime knows it).
 */
export function receiverEvent(
  change: CircuitChange,
  channel: string,
  outboundUrl: string,
  state: CircuitState,
  now: number,
  downSince?: number,
): OperatorEventInput {
  const outbound_url = redactUrl(outboundUrl);
  if (change === "down") {
    const probeAt = state.down?.probeAt;
    return {
      type: "receiver.down",
      channel,
      data: {
        outbound_url,
        failures: state.failures,
        next_probe_at: probeAt === undefined ? undefined : new Date(probeAt).toISOString(),
      },
    };
  }
  return {
    type: "receiver.up",
    channel,
    data: { outbound_url, down_ms: downSince === undefined ? undefined : Math.max(0, now - downSince) },
  };
}

/** `brain.paused` until `until` after its server answered `status`. */
export function brainPausedEvent(brain: string, until: number, status: number): OperatorEventInput {
  return { type: "brain.paused", brain, data: { brain, status, until: new Date(until).toISOString() } };
}

/** `brain.resumed` after a pause of `pausedMs`. */
export function brainResumedEvent(brain: string, pausedMs: number): OperatorEventInput {
  return { type: "brain.resumed", brain, data: { brain, paused_ms: pausedMs } };
}
