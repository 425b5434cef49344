import type { InboundQueue } from "../core/app/inbound-queue.js";
import { unavailableError } from "../core/app/refusals.js";
import { errorMessage } from "../core/channel-error.js";
import { newJob } from "../core/lifecycle/job.js";
import { jobKey, type PendingJobStore } from "../core/lifecycle/pending-job-store.js";
import type { Logger } from "../core/log/logger.js";
import type { QueuedMessage } from "../core/message/inbound-message.js";
import { fitsInline, type InboundBody } from "./queue-body.js";

/** What the Cloudflare queue adapter is built from. */
export interface CloudflareQueueOptions {
  /** The producer binding of the inbound queue. */
  readonly binding: Queue<unknown>;
  /** Where oversized messages wait. */
  readonly store: PendingJobStore;
  readonly logger: Logger;
}

/**
 * The core InboundQueue on a Cloudflare Queue. `enqueue` resolves once the platform has the
 * message (it is then durable); a failed send becomes a 503 with `Retry-After`, so the client
 * retries instead of believing the message was taken.
 */
export function createCloudflareQueue(options: CloudflareQueueOptions): InboundQueue {
  const { binding, store, logger } = options;
  return {
    async enqueue(message: QueuedMessage): Promise<void> {
      const job = newJob(message);
      const stored = !fitsInline(message);
      try {
        if (stored) await store.add(job);
        const body: InboundBody = stored ? { stored: jobKey(job) } : message;
        await binding.send(body, { contentType: "json" });
      } catch (error) {
        // The client will send it again; a stored copy would only wait for the TTL.
        if (stored) await Promise.resolve(store.remove(jobKey(job))).catch(() => undefined);
        logger.error("the inbound queue refused a message", {
          channel: message.channel,
          message_id: message.id,
          error: errorMessage(error),
        });
        throw unavailableError(error);
      }
    },
  };
}
