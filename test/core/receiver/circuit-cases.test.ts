/** The receiver circuit's cases over the memory store: one Node process, its keepers sharing one map. */
import { createMemoryCircuitStore } from "../../../src/core/receiver/memory-circuit-store.js";
import { circuitCases } from "../../shared/circuit-cases.js";

circuitCases("memory", {
  stores: async () => {
    const store = createMemoryCircuitStore();
    return { channel: "webhook", open: () => store };
  },
});
