/**
 * What the timeline store contract's cases (`timeline-store-contract.ts`,
 * `timeline-prune-cases.ts`) are made of: the shape of a case, and the messages and writes
 * they build. Runtime-neutral, as the contract is.
 */
import type { TimelineEvent } from "../../../src/core/timeline/timeline-event.js";
import type {
  ActivityCount,
  TimelineStore,
  TimelineSubject,
  TimelineWrite,
} from "../../../src/core/timeline/timeline-store.js";

/** How a store bounds its size, when it is not one list: see `timelineStoreContract`. */
export interface TimelineStoreOptions {
  /**
   * The store is split in this many parts that each keep their share (`keep` divided by this,
   * rounded up) of the most recently accepted; 1 (the default) keeps exactly `keep`.
   */
  readonly parts?: number;
}

/** One case: what it holds, and how it checks a fresh handle on the store. */
export interface TimelineStoreCase {
  readonly name: string;
  readonly run: (store: TimelineStore, options: Required<TimelineStoreOptions>) => Promise<void>;
}

/** One minute in ms. */
export const MINUTE = 60_000;

/** A message of `channel` accepted at `acceptedAt`; `id` defaults to a fresh one. */
export function subject(channel: string, acceptedAt: number, conversationId = "c1", id?: string): TimelineSubject {
  return { id: id ?? `m-${crypto.randomUUID()}`, channel, conversationId, acceptedAt };
}

/** A write of `events` to `of`'s timeline, which makes it `status`. */
export function write(
  of: TimelineSubject,
  events: readonly TimelineEvent[],
  status: TimelineWrite["status"],
  updatedAt = Math.max(of.acceptedAt, ...events.map((event) => event.at)),
): TimelineWrite {
  return { ...of, status, updatedAt, events };
}

/** The write that accepts `of`. */
export const accepted = (of: TimelineSubject): TimelineWrite =>
  write(of, [{ type: "accepted", at: of.acceptedAt, client_address: "203.0.113.7" }], "accepted");

/** A channel no other case uses. */
export const freshChannel = () => `timeline-${crypto.randomUUID()}`;

/** Sums counts by minute and series: a store may hand one count back in several parts. */
export function summed(counts: readonly ActivityCount[]): Map<string, number> {
  const sums = new Map<string, number>();
  for (const { minute, series, count } of counts) {
    sums.set(`${minute} ${series}`, (sums.get(`${minute} ${series}`) ?? 0) + count);
  }
  return sums;
}
