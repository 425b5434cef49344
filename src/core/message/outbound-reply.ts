import type { KeyMapping } from "../config/message-fields.js";

/** One reply of a brain, before it is addressed. */
export interface BrainReply {
  readonly text?: string;
  readonly mediaUrl?: string;
  readonly mediaType?: string;
}

/** Where a reply goes and where it stands: everything of the outbound body but the content. */
export interface ReplyEnvelope {
  /** Reply id: the same on every delivery attempt (`webhook-id`). */
  readonly id: string;
  readonly inReplyTo: string;
  readonly conversationId: string;
  readonly recipientId: string;
  readonly brain: string;
  /** Epoch milliseconds at which the brain produced it. */
  readonly createdAt: number;
  /** 1, 2, 3… within the conversation. */
  readonly sequence: number;
}

/**
 * Renders the JSON body POSTed to `outbound_url`. The mapping renames the message fields
 * (`conversation_id`, `text`, `media_url`, `media_type`); the other keys are fixed.
 * Content and envelope come apart because merging them with a spread cost more per reply
 * than rendering the JSON.
 */
export function renderReplyBody(content: BrainReply, reply: ReplyEnvelope, keys: KeyMapping): string {
  const body: Record<string, unknown> = {
    message_id: reply.id,
    in_reply_to: reply.inReplyTo,
    [keys.conversation_id]: reply.conversationId,
    recipient_id: reply.recipientId,
  };
  if (content.text !== undefined) body[keys.text] = content.text;
  if (content.mediaUrl !== undefined) body[keys.media_url] = content.mediaUrl;
  if (content.mediaType !== undefined) body[keys.media_type] = content.mediaType;
  body.sequence = reply.sequence;
  body.brain = reply.brain;
  body.created_at = new Date(reply.createdAt).toISOString();
  return JSON.stringify(body);
}

/**
 * A rendered body with another `sequence`: a replayed reply keeps every byte but its place
 * in the conversation. The key order is kept, so the body differs only in that number.
 */
export function renumberReplyBody(body: string, sequence: number): string {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  parsed.sequence = sequence;
  return JSON.stringify(parsed);
}
