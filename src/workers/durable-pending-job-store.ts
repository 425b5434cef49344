import { conversationKey } from "../core/conversation/conversation-store.js";
import { type JobKey, jobKey, type PendingJobStore } from "../core/delivery/pending-job-store.js";
import type { ConversationObject } from "./conversation-object.js";

/**
 * The pending-job store on Workers, in the Durable Object of each job's conversation, which
 * exists anyway for its history and its order: messages too large for a queue message (until
 * the inbound consumer hands them over), dead letters too large for one (until their consumer
 * reads them), and dead letters kept for good. The object's expiry removes anything left
 * behind except dead letters.
 */
export function createDurablePendingJobStore(namespace: DurableObjectNamespace<ConversationObject>): PendingJobStore {
  const stub = (key: JobKey) => namespace.get(namespace.idFromName(conversationKey(key.channel, key.conversationId)));
  return {
    add: (job) => stub(jobKey(job)).storeJob(job),
    update: (job) => stub(jobKey(job)).storeJob(job),
    async get(key) {
      return (await stub(key).storedJob(key.id)) ?? undefined;
    },
    remove: (key) => stub(key).forgetJob(key.id),
    bury: (letter) => stub(jobKey(letter.job)).keepDeadLetter(letter.job.message.id, JSON.stringify(letter)),
  };
}
