/** A stored job its conversation's owner is told of: the conversation, and where the job is. */
export interface JobNotice {
  readonly conversation: string;
  /** The job's position in the jobs table. */
  readonly seq: number;
  readonly id: string;
}

const CHANNEL_PREFIX = "webhook_channel_";

/** The channel a replica LISTENs on: Postgres identifiers, so ids are kept to [a-z0-9]. */
export function notifyChannel(replica: string): string {
  return `${CHANNEL_PREFIX}${replica}`;
}

/**
 * A notice as a notification's payload: the position and the id first, the conversation key
 * last. {@link noticeSql} builds the same text in a statement.
 */
export function noticePayload(notice: JobNotice): string {
  return `${notice.seq} ${notice.id} ${notice.conversation}`;
}

/**
 * `pg_notify` of a notice to replica `owner` as SQL, from the SQL expressions of its parts:
 * the same channel and payload as {@link notifyChannel} and {@link noticePayload}.
 */
export function noticeSql(owner: string, seq: string, id: string, conversation: string): string {
  return `pg_notify('${CHANNEL_PREFIX}' || ${owner}, ${seq} || ' ' || ${id} || ' ' || ${conversation})`;
}

/**
 * A notification's payload as a notice. A conversation key starts with its channel's length and
 * a colon, never with digits and a space, so a bare key (what a replica of schema 2 sends) reads
 * as a notice without a position.
 */
export function readNotice(payload: string): JobNotice | { readonly conversation: string } {
  const match = /^(\d+) (\S+) (.+)$/s.exec(payload);
  if (match === null) return { conversation: payload };
  const [, seq, id, conversation] = match;
  if (seq === undefined || id === undefined || conversation === undefined) return { conversation: payload };
  return { conversation, seq: Number(seq), id };
}
