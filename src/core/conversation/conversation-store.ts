/** One turn of a conversation as a brain sees it. */
export interface ConversationTurn {
  readonly role: "user" | "assistant";
  readonly text?: string;
  readonly mediaUrl?: string;
  readonly mediaType?: string;
  /** Epoch milliseconds. */
  readonly at: number;
}

/**
 * Conversation memory, keyed by `channel` and `conversation_id`. Implementations bound what
 * they keep; `history` returns at most `limit` turns, oldest first.
 */
export interface ConversationStore {
  history(key: string, limit: number): Promise<readonly ConversationTurn[]>;
  append(key: string, turns: readonly ConversationTurn[]): Promise<void>;
}

/** The store key of one conversation of one channel; unambiguous whatever the names contain. */
export function conversationKey(channel: string, conversationId: string): string {
  return `${channel.length}:${channel}:${conversationId}`;
}

/** The channel of a conversation key ({@link conversationKey}): its length comes first. */
export function channelOfKey(key: string): string | undefined {
  const colon = key.indexOf(":");
  const length = Number(key.slice(0, colon));
  if (colon < 1 || !Number.isInteger(length)) return undefined;
  return key.slice(colon + 1, colon + 1 + length);
}
