import type { DeadLetter } from "../dead-letters/dead-letter.js";

/** A stored dead letter with its id (the message's id) and channel. */
export interface StoredDeadLetter {
  readonly id: string;
  readonly channel: string;
  readonly letter: DeadLetter;
}

/**
 * One dead letter as the admin API and `dead-letters list --json` show it: the names of the HTTP API
 * (snake_case), RFC 3339 times, and reply bodies as JSON rather than strings of JSON. It is
 * mapped from the stored record here so that the state's own format can change without
 * changing what scripts read.
 */
export interface DeadLetterItem {
  /** The id `dead-letters replay --id` takes; the message's id. */
  readonly id: string;
  readonly channel: string;
  readonly conversation_id: string;
  readonly message_id: string;
  /** When the last attempt failed, RFC 3339 in UTC. */
  readonly failed_at: string;
  /** Failed attempts of the step that died. */
  readonly attempts: number;
  /** `brain`: the brain was never answered; `reply`: a reply could not be delivered. */
  readonly stage: "brain" | "reply";
  /** `detail`: what the upstream said, in its own words (it may quote the message), null when nothing. */
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly status: number | null;
    readonly detail: string | null;
  };
  readonly message: {
    readonly sender_id: string;
    readonly sender_name: string | null;
    readonly text: string | null;
    readonly media_url: string | null;
    readonly media_type: string | null;
    /** When the service accepted it, RFC 3339 in UTC. */
    readonly received_at: string;
    readonly idempotency_key: string | null;
  };
  /** The replies the brain gave, in order; empty at the `brain` stage. */
  readonly replies: readonly {
    readonly id: string;
    readonly sequence: number;
    readonly delivered: boolean;
    readonly body: unknown;
  }[];
}

/** Maps a stored dead letter to what the admin API and `--json` show. */
export function deadLetterItem(row: StoredDeadLetter): DeadLetterItem {
  const { job, error, attempts, diedAt } = row.letter;
  const { message } = job.message;
  return {
    id: row.id,
    channel: row.channel,
    conversation_id: message.conversationId,
    message_id: job.message.id,
    failed_at: new Date(diedAt).toISOString(),
    attempts,
    stage: job.replies === undefined ? "brain" : "reply",
    error: { code: error.code, message: error.message, status: error.status ?? null, detail: error.detail ?? null },
    message: {
      sender_id: message.senderId,
      sender_name: message.senderName ?? null,
      text: message.text ?? null,
      media_url: message.mediaUrl ?? null,
      media_type: message.mediaType ?? null,
      received_at: new Date(job.message.receivedAt).toISOString(),
      idempotency_key: job.message.idempotencyKey ?? null,
    },
    replies: (job.replies ?? []).map((reply, index) => ({
      id: reply.id,
      sequence: reply.sequence,
      delivered: index < job.delivered,
      body: parseBody(reply.body),
    })),
  };
}

/** A reply body is stored as the exact bytes sent; shown as JSON when it is JSON. */
function parseBody(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}
