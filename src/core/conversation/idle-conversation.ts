/**
 * A conversation untouched this long, with nothing waiting, is forgotten: its reply `sequence`
 * counter (and on Workers its whole object) goes, so storage stays bounded however many senders
 * come and go, and its next reply is numbered 1 again. Far longer than any retry lasts
 * (`max_age_ms`), and never applied while a job of the conversation waits. The one rule of every
 * engine; the stores only find and delete by it.
 */
export const IDLE_CONVERSATION_MS = 30 * 86_400_000;

/** The last activity (epoch milliseconds) a conversation may have at `now` and still be remembered. */
export function idleCutoff(now: number): number {
  return now - IDLE_CONVERSATION_MS;
}

/**
 * A conversation's activity is noted at most this often: the idle time needs no finer clock, and
 * every stamp is a row written.
 */
export const ACTIVITY_NOTED_EVERY_MS = 3_600_000;

/**
 * Whether a job that ends at `now` (delivered, or a dead letter) must note its end as its
 * conversation's activity: its replies were numbered (which noted the activity) no earlier than
 * its acceptance at `receivedAt`, so only a job that lasted longer than
 * {@link ACTIVITY_NOTED_EVERY_MS} (a receiver down, a brain paused) needs a stamp of its own.
 */
export function endNotesActivity(receivedAt: number, now: number): boolean {
  return now - receivedAt >= ACTIVITY_NOTED_EVERY_MS;
}
