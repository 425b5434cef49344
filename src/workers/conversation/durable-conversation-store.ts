import type { ConversationStore } from "../../core/conversation/conversation-store.js";
import type { ConversationObject } from "./conversation-object.js";

/**
 * The core's ConversationStore on Durable Objects: one {@link ConversationObject} per
 * conversation key, called over RPC. History survives isolates, deployments and restarts,
 * and each conversation keeps at most its last 100 turns.
 */
export function createDurableConversationStore(
  namespace: DurableObjectNamespace<ConversationObject>,
): ConversationStore {
  const stub = (key: string) => namespace.get(namespace.idFromName(key));
  return {
    async history(key, limit) {
      if (limit <= 0) return [];
      return await stub(key).history(limit);
    },
    async append(key, turns) {
      if (turns.length === 0) return;
      await stub(key).append(turns);
    },
  };
}
