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
