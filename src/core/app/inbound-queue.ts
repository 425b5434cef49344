import type { ChannelError } from "../channel-error.js";
import type { QueuedMessage } from "../message/inbound-message.js";

/**
 * Where the inbound endpoint hands accepted messages. `enqueue` returns undefined when the
 * queue owns the message at once, or a promise that resolves once it is safely owned (for
 * example committed). It throws or rejects with a ChannelError (`buffer_full`, retryable)
 * when the queue cannot take it, which the endpoint turns into a 503 with `Retry-After`.
 */
export interface InboundQueue {
  enqueue(message: QueuedMessage): Promise<void> | undefined;
  /**
   * False when `enqueue` would refuse with `buffer_full` now, asked before a message is built:
   * past its knee a service refuses more requests than it takes, and each refusal should cost
   * little. Left out by a queue that cannot know before it tries (a platform queue).
   */
  hasRoom?(): boolean;
  /**
   * Why the queue takes nothing now whatever its room, undefined while it takes messages: its
   * store has kept an accepted message waiting for its commit past a bound, or is known not to
   * take writes. `enqueue` refuses with it then, and a request is refused with it before its
   * `Idempotency-Key` is looked up, a lookup that would wait on the same database. Left out by a
   * queue whose store commits at once or that cannot tell.
   */
  refusal?(): ChannelError | undefined;
}
