import { createMemoryConversationStore } from "../../src/core/conversation/memory-conversation-store.js";
import type { Job } from "../../src/core/lifecycle/job.js";
import type { LaneStore } from "../../src/core/lifecycle/lane-store.js";
import { createMemoryLaneStore } from "../../src/core/lifecycle/memory-lane-store.js";

/**
 * A lane store in memory over a database that has stopped answering: each `add` waits until
 * `thaw`, which commits what waited in order and lets later adds through at once.
 */
export function frozenLaneStore(): { store: LaneStore; thaw: () => void } {
  const memory = createMemoryLaneStore(createMemoryConversationStore());
  let frozen = true;
  const waiting: (() => void)[] = [];
  const store: LaneStore = {
    ...memory,
    add: (job: Job) => {
      if (!frozen) return memory.add(job);
      return new Promise<void>((resolve) => {
        waiting.push(() => {
          void memory.add(job);
          resolve();
        });
      });
    },
  };
  const thaw = (): void => {
    frozen = false;
    for (const commit of waiting.splice(0)) commit();
  };
  return { store, thaw };
}
