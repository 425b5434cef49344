/** The timeline store contract, held against the in-memory store. */
import { MemoryTimelineStore } from "../../../src/core/timeline/memory-timeline-store.js";
import { timelineStoreContract } from "../../shared/timeline-store-cases.js";

timelineStoreContract("memory", () => new MemoryTimelineStore());
