import type { QueuedMessage } from "../message/inbound-message.js";

/**
 * Where the inbound endpoint hands accepted messages. `enqueue` resolves once the message is
 * safely owned by the queue; it throws a ChannelError (`buffer_full`, retryable) when the
 * queue cannot take it, which the endpoint turns into a 503 with `Retry-After`.
 */
export interface Queue {
  enqueue(message: QueuedMessage): Promise<void>;
}
