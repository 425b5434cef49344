/**
 * The answers of the timeline admin API as the console reads them (issue 32's contract):
 * `GET /admin/messages/{id}`, `GET /admin/messages?conversation_id=` and `GET /admin/activity`.
 * Times are RFC 3339 in UTC; an optional field is absent when the service does not know it.
 */

/** Where a message stands. */
export type MessageStatus = "accepted" | "retrying" | "waiting" | "delivered" | "dead_letter" | "replayed";

/** Why a message that has not ended waits. */
export interface Waiting {
  readonly reason: "receiver_down" | "brain_paused" | "behind_message" | "queued";
  readonly behind_message_id?: string;
  readonly until?: string;
}

/** One thing that happened to a message; `type` says which. */
export type TimelineEvent =
  | {
      readonly at: string;
      readonly type: "accepted";
      readonly client_address?: string;
      readonly idempotency_key?: string;
      readonly text?: string;
    }
  | {
      readonly at: string;
      readonly type: "brain_call";
      readonly brain: string;
      readonly fallback: boolean;
      readonly ok: boolean;
      readonly duration_ms: number;
      readonly error_code?: string;
      readonly error?: string;
      readonly status?: number;
      readonly tokens?: { readonly input?: number; readonly output?: number };
    }
  | {
      readonly at: string;
      readonly type: "reply";
      readonly reply_id: string;
      readonly sequence: number;
      readonly text?: string;
    }
  | {
      readonly at: string;
      readonly type: "attempt";
      readonly reply_id: string;
      readonly sequence: number;
      readonly ok: boolean;
      readonly duration_ms: number;
      readonly status?: number;
      readonly error_code?: string;
      readonly error?: string;
    }
  | {
      readonly at: string;
      readonly type: "retry";
      readonly next_attempt_at: string;
      readonly error_code: string;
      readonly error: string;
    }
  | { readonly at: string; readonly type: "waiting"; readonly reason: "receiver_down"; readonly until: string }
  | { readonly at: string; readonly type: "delivered" }
  | { readonly at: string; readonly type: "dead_letter"; readonly error_code: string; readonly error: string }
  | { readonly at: string; readonly type: "replayed" };

/** `GET /admin/messages/{id}`: one message and everything that happened to it. */
export interface MessageTimeline {
  readonly message_id: string;
  readonly channel: string;
  readonly conversation_id: string;
  readonly status: MessageStatus;
  /** Only while the message has not ended. */
  readonly waiting?: Waiting;
  readonly accepted_at: string;
  readonly updated_at: string;
  readonly events: readonly TimelineEvent[];
}

/** One message of `GET /admin/messages`. */
export interface MessageSummary {
  readonly message_id: string;
  readonly channel: string;
  readonly conversation_id: string;
  readonly status: MessageStatus;
  readonly accepted_at: string;
  readonly updated_at: string;
}

/** A page of `GET /admin/messages`, newest first. */
export interface MessagePage {
  readonly items: readonly MessageSummary[];
  readonly next_cursor: string | null;
}

/** One minute of `GET /admin/activity`. */
export interface ActivityBucket {
  readonly start: string;
  readonly accepted: number;
  readonly delivered: number;
  readonly retrying: number;
  readonly dead_lettered: number;
  /** End to end (accepted to last reply delivered) of the messages delivered in this minute; null when none was. */
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
}

/** `GET /admin/activity`: the last hour, a bucket a minute, oldest first. */
export interface Activity {
  readonly bucket_seconds: number;
  readonly buckets: readonly ActivityBucket[];
}
