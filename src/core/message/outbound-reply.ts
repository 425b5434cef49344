import type { KeyMapping } from "../config/message-fields.js";

/** One reply of a brain, before it is addressed. */
export interface BrainReply {
  readonly text?: string;
  readonly mediaUrl?: string;
  readonly mediaType?: string;
}

/** A reply addressed to the client, ready to be rendered and delivered. */
export interface OutboundReply extends BrainReply {
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
 */
export function renderReplyBody(reply: OutboundReply, keys: KeyMapping): string {
  const body: Record<string, unknown> = {
    message_id: reply.id,
    in_reply_to: reply.inReplyTo,
    [keys.conversation_id]: reply.conversationId,
    recipient_id: reply.recipientId,
  };
  if (reply.text !== undefined) body[keys.text] = reply.text;
  if (reply.mediaUrl !== undefined) body[keys.media_url] = reply.mediaUrl;
  if (reply.mediaType !== undefined) body[keys.media_type] = reply.mediaType;
  body.sequence = reply.sequence;
  body.brain = reply.brain;
  body.created_at = new Date(reply.createdAt).toISOString();
  return JSON.stringify(body);
}
