/**
 * Hands out reply sequence numbers per conversation: 1, 2, 3… A conversation's messages are
 * answered one at a time, so a reservation never races another of the same conversation.
 */
export interface SequenceCounter {
  /** Reserves `count` numbers for a conversation and returns the first. */
  reserve(key: string, count: number): Promise<number>;
}
