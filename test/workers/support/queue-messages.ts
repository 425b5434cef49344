import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";

/** An accepted message as the endpoint would have queued it. */
export function queuedMessage(fields: {
  conversationId: string;
  text?: string;
  senderId?: string;
  receivedAt?: number;
  channel?: string;
}): QueuedMessage {
  const senderId = fields.senderId ?? "u1";
  return {
    id: crypto.randomUUID(),
    channel: fields.channel ?? "webhook",
    receivedAt: fields.receivedAt ?? Date.now(),
    message: { senderId, conversationId: fields.conversationId, text: fields.text ?? "hello" },
  };
}

/** A queue message as the platform hands it to the consumer, on its `attempts`-th delivery. */
export function delivered(
  body: unknown,
  attempts = 1,
  id: string = crypto.randomUUID(),
): ServiceBindingQueueMessage<unknown> {
  return { id, timestamp: new Date(), attempts, body };
}
