import type { SequenceCounter } from "../../core/conversation/sequence-counter.js";
import type { ConversationObject } from "./conversation-object.js";

/**
 * The core's SequenceCounter on Durable Objects: each conversation's counter lives in its
 * {@link ConversationObject}, so numbers stay unique and increasing across isolates and
 * concurrent consumer invocations.
 */
export function createDurableSequenceCounter(namespace: DurableObjectNamespace<ConversationObject>): SequenceCounter {
  return {
    async reserve(key, count) {
      return await namespace.get(namespace.idFromName(key)).reserveSequence(count);
    },
  };
}
