import { newJob } from "../core/delivery/job.js";
import { ChannelError, errorMessage } from "../core/errors/channel-error.js";
import type { Logger } from "../core/log/logger.js";
import type { QueuedMessage } from "../core/message/inbound-message.js";
import type { Queue as ChannelQueue } from "../core/queue/queue.js";
import type { JobStore } from "./durable-job-store.js";
import { fitsInline, type InboundBody, type StoredJobRef } from "./queue-body.js";

/** What the Cloudflare queue adapter is built from. */
export interface CloudflareQueueOptions {
  /** The producer binding of the inbound queue. */
  readonly binding: Queue<unknown>;
  /** Where oversized messages wait. */
  readonly store: JobStore;
  readonly logger: Logger;
  /** Seconds a refused client is told to wait. */
  readonly retryAfterSeconds: number;
}

/**
 * The core Queue on a Cloudflare Queue. `enqueue` resolves once the platform has the message
 * (it is then durable); a failed send becomes `buffer_full` (503 with `Retry-After`), so the
 * client retries instead of believing the message was taken.
 */
export function createCloudflareQueue(options: CloudflareQueueOptions): ChannelQueue {
  const { binding, store, logger, retryAfterSeconds } = options;
  return {
    async enqueue(message: QueuedMessage): Promise<void> {
      let ref: StoredJobRef | undefined;
      try {
        if (!fitsInline(message)) ref = await store.put(newJob(message));
        const body: InboundBody = ref ?? message;
        await binding.send(body, { contentType: "json" });
      } catch (error) {
        // The client will send it again; a stored copy would only wait for the TTL.
        if (ref !== undefined) await store.forget(ref).catch(() => undefined);
        logger.error("the inbound queue refused a message", {
          channel: message.channel,
          message_id: message.id,
          error: errorMessage(error),
        });
        throw new ChannelError("buffer_full", "The message could not be queued; retry shortly.", {
          status: 503,
          retryable: true,
          retryAfterSeconds,
          cause: error,
        });
      }
    },
  };
}
