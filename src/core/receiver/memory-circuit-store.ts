import type { CircuitStore, HeldLanes, StoredCircuit } from "./circuit-store.js";
import { RECEIVER_UP } from "./receiver-circuit.js";

/** The circuits of one process, in memory. */
export function createMemoryCircuitStore(): CircuitStore {
  const circuits = new Map<string, StoredCircuit>();
  return {
    read: (channel) => circuits.get(channel) ?? { state: RECEIVER_UP, version: 0 },
    write(channel, state, version) {
      if ((circuits.get(channel)?.version ?? 0) !== version) return false;
      circuits.set(channel, { state, version: version + 1 });
      return true;
    },
  };
}

/** Held lanes in memory, which answer at once. */
export interface MemoryHeldLanes extends HeldLanes {
  add(key: string): void;
  addFirst(key: string): void;
  take(limit: number): readonly string[];
  delete(key: string): void;
  count(): number;
}

/** The held lanes of one process, in memory: a Set keeps the order they began to wait in. */
export function createMemoryHeldLanes(): MemoryHeldLanes {
  let held = new Set<string>();
  return {
    add(key) {
      held.add(key);
    },
    addFirst(key) {
      held = new Set([key, ...held]);
    },
    take(limit) {
      const taken: string[] = [];
      for (const key of held) {
        if (taken.length >= limit) break;
        taken.push(key);
      }
      for (const key of taken) held.delete(key);
      return taken;
    },
    delete(key) {
      held.delete(key);
    },
    count: () => held.size,
  };
}
