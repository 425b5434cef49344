/**
 * The events of one message's timeline, in the shape the admin API shows them, except that
 * times are epoch ms (the API writes them as ISO 8601). Plain JSON, so any store keeps them as
 * text and the delivery thread hands them over unchanged. Optional fields are left out when
 * unknown; `text` only when the operator keeps message text (`timeline.keep_text`).
 */
export type TimelineEvent = AcceptedEvent | RunEvent | SettledEvent | ReplayedEvent;

/** The service took the message (the 200 the client got). */
export interface AcceptedEvent {
  readonly type: "accepted";
  readonly at: number;
  readonly client_address?: string;
  readonly idempotency_key?: string;
  readonly text?: string;
}

/** What one run of a job records as it goes: each brain call, each reply made, each POST. */
export type RunEvent = BrainCallEvent | ReplyEvent | AttemptEvent;

/** One call to a brain (a fallback chain records one per brain it asked). */
export interface BrainCallEvent {
  readonly type: "brain_call";
  readonly at: number;
  readonly brain: string;
  /** True for a brain asked after the route's own brain failed. */
  readonly fallback: boolean;
  readonly ok: boolean;
  readonly duration_ms: number;
  readonly error_code?: string;
  readonly error?: string;
  /** The brain server's HTTP status, when it answered one. */
  readonly status?: number;
  /**
   * True when the brain is paused after this call: it refused the call (the brain was not asked,
   * no `status`), or its answer (`status` 429 or 503) paused it.
   */
  readonly paused?: boolean;
  readonly tokens?: { readonly input?: number; readonly output?: number };
}

/** A reply the brain gave, numbered in its conversation. */
export interface ReplyEvent {
  readonly type: "reply";
  readonly at: number;
  readonly reply_id: string;
  readonly sequence: number;
  readonly text?: string;
}

/** One POST of a reply to the channel's `outbound_url`. */
export interface AttemptEvent {
  readonly type: "attempt";
  readonly at: number;
  readonly reply_id: string;
  readonly sequence: number;
  readonly ok: boolean;
  readonly duration_ms: number;
  readonly status?: number;
  readonly error_code?: string;
  readonly error?: string;
}

/** How a run ended: what the lane runner settled. */
export type SettledEvent =
  | {
      readonly type: "retry";
      readonly at: number;
      readonly next_attempt_at: number;
      readonly error_code: string;
      readonly error: string;
    }
  | { readonly type: "waiting"; readonly at: number; readonly reason: "receiver_down"; readonly until: number }
  | { readonly type: "delivered"; readonly at: number }
  | { readonly type: "dead_letter"; readonly at: number; readonly error_code: string; readonly error: string };

/** An operator replayed the message's dead letter. */
export interface ReplayedEvent {
  readonly type: "replayed";
  readonly at: number;
}

/** Where a message stands, as its latest event says. */
export type MessageStatus = "accepted" | "retrying" | "waiting" | "delivered" | "dead_letter" | "replayed";

/** Every status, for checking a query's `status`. */
export const MESSAGE_STATUSES: readonly MessageStatus[] = [
  "accepted",
  "retrying",
  "waiting",
  "delivered",
  "dead_letter",
  "replayed",
];

/** True for a status after which nothing more happens unless an operator replays the message. */
export function hasEnded(status: MessageStatus): boolean {
  return status === "delivered" || status === "dead_letter";
}
