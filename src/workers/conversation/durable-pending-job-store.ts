import { conversationKey } from "../../core/conversation/conversation-store.js";
import { type JobKey, jobKey, type PendingJobStore } from "../../core/lifecycle/pending-job-store.js";
import type { DeadLetterObject } from "../dead-letters/dead-letter-object.js";
import { DEAD_LETTER_STORE_NAME } from "../dead-letters/dead-letter-store-name.js";
import type { ConversationObject } from "./conversation-object.js";

/**
 * The pending-job store on Workers, in the Durable Object of each job's conversation, which
 * exists anyway for its history and its order: messages too large for a queue message (until
 * the inbound consumer hands them over) and dead letters too large for one (until their
 * consumer reads them). The object's expiry removes anything left behind. A buried job is
 * kept for good in the {@link DeadLetterObject}, where the admin API finds it, and then
 * leaves its conversation.
 */
export function createDurablePendingJobStore(
  namespace: DurableObjectNamespace<ConversationObject>,
  letters: DurableObjectNamespace<DeadLetterObject>,
): PendingJobStore {
  const stub = (key: JobKey) => namespace.get(namespace.idFromName(conversationKey(key.channel, key.conversationId)));
  return {
    add: (job) => stub(jobKey(job)).storeJob(job),
    update: (job) => stub(jobKey(job)).storeJob(job),
    async get(key) {
      return (await stub(key).storedJob(key.id)) ?? undefined;
    },
    remove: (key) => stub(key).forgetJob(key.id),
    async bury(letter) {
      await letters.get(letters.idFromName(DEAD_LETTER_STORE_NAME)).keep(letter);
      // Kept for good: a parked copy left behind (its object unreachable) goes with the conversation's expiry.
      await Promise.resolve(stub(jobKey(letter.job)).forgetJob(letter.job.message.id)).catch(() => undefined);
    },
  };
}
