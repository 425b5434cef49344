import { conversationKey } from "../core/conversation/conversation-store.js";
import type { Job } from "../core/delivery/job.js";
import type { ConversationObject } from "./conversation-object.js";
import type { StoredJobRef } from "./queue-body.js";

/**
 * Keeps jobs that must outlive a queue message: messages too large for one, and the
 * progress of a message that is being retried.
 */
export interface JobStore {
  /** Stores the job (replacing an earlier state) and returns the reference a queue carries. */
  put(job: Job): Promise<StoredJobRef>;
  /** The stored job, or undefined when there is none (never stored, answered, or expired). */
  get(ref: StoredJobRef): Promise<Job | undefined>;
  /** Deletes it once it is answered. */
  forget(ref: StoredJobRef): Promise<void>;
  /** Keeps a dead letter (JSON, content included) in place of the job, for good. */
  bury(job: Job, letter: Readonly<Record<string, unknown>>): Promise<void>;
}

/** Where a job is (or would be) stored: keyed by its message's id and conversation. */
export function jobRef(job: Job): StoredJobRef {
  const { message } = job;
  return { stored: { id: message.id, channel: message.channel, conversationId: message.message.conversationId } };
}

/**
 * A JobStore in the Durable Object of each job's conversation, which exists anyway for its
 * history; the object's TTL alarm removes anything left behind.
 */
export function createDurableJobStore(namespace: DurableObjectNamespace<ConversationObject>): JobStore {
  const stub = ({ stored }: StoredJobRef) =>
    namespace.get(namespace.idFromName(conversationKey(stored.channel, stored.conversationId)));
  return {
    async put(job) {
      const ref = jobRef(job);
      await stub(ref).storeJob(job);
      return ref;
    },
    async get(ref) {
      return (await stub(ref).storedJob(ref.stored.id)) ?? undefined;
    },
    async forget(ref) {
      await stub(ref).forgetJob(ref.stored.id);
    },
    async bury(job, letter) {
      await stub(jobRef(job)).keepDeadLetter(job.message.id, JSON.stringify(letter));
    },
  };
}
