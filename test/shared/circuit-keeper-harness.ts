/**
 * What the receiver circuit's shared cases drive: a backend's stores, a keeper wired as a runtime
 * wires it (recording what it wakes, schedules and changes), and the reports runs make.
 * Runtime-neutral: no `node:` or `cloudflare:` imports.
 */
import { type ChangeOrigin, CircuitKeeper, type WakeResult } from "../../src/core/receiver/circuit-keeper.js";
import type { CircuitStore, HeldLanes } from "../../src/core/receiver/circuit-store.js";
import { createMemoryHeldLanes } from "../../src/core/receiver/memory-circuit-store.js";
import type { CircuitPolicy, PostReport } from "../../src/core/receiver/receiver-circuit.js";

/** What a backend brings: stores of a channel no other case uses, one per keeper ("replica"). */
export interface CircuitCasesHarness {
  /** Stores over one fresh channel's circuit: each call, another keeper's view of the same row. */
  stores(): Promise<{ readonly channel: string; open(): CircuitStore }>;
  /** The held lanes of the first keeper (the receiver object's own table inside workerd); default memory. */
  readonly held?: () => HeldLanes;
}

export const POLICY: CircuitPolicy = {
  failuresToOpen: 3,
  initialDelayMs: 1_000,
  maxDelayMs: 60_000,
  probeTimeoutMs: 25_000,
  target: "http://receiver.test",
};

export const UNANSWERED: PostReport = { answered: false };
export const ANSWERED: PostReport = { answered: true };
/** A run of several replies: the first answered, a later one not. */
export const ANSWERED_THEN_NOT: PostReport = { answered: false, answeredBefore: true };

/** A keeper as a runtime wires it, recording what it wakes, when it asks to be called, and what changed. */
export function keeperOver(
  store: CircuitStore,
  channel: string,
  clock: { now: number },
  options: {
    held?: HeldLanes | undefined;
    policy?: () => CircuitPolicy;
    answers?: (key: string) => WakeResult;
  } = {},
) {
  const woken: string[] = [];
  // The time each probe was granted until, as the wake hands it to the lane.
  const probeDeadlines: number[] = [];
  const changes: string[] = [];
  const origins: ChangeOrigin[] = [];
  const scheduled: (number | undefined)[] = [];
  const held = options.held ?? createMemoryHeldLanes();
  const keeper = new CircuitKeeper({
    channel,
    policy: options.policy ?? (() => POLICY),
    now: () => clock.now,
    store,
    held,
    wake: (keys, probeUntil) =>
      keys.map((key) => {
        woken.push(probeUntil !== undefined ? `probe ${key}` : key);
        if (probeUntil !== undefined) probeDeadlines.push(probeUntil);
        return options.answers?.(key) ?? (probeUntil !== undefined ? "probing" : "woken");
      }),
    schedule: (at) => void scheduled.push(at),
    changed: (change, _state, waiting, origin) => {
      changes.push(`${change} ${waiting}`);
      origins.push(origin);
    },
  });
  return { keeper, woken, probeDeadlines, changes, origins, scheduled, held };
}

/** Reports `count` unanswered POSTs in a row. */
export async function fail(keeper: CircuitKeeper, count: number, holdAs: string | null = null): Promise<void> {
  for (let index = 0; index < count; index += 1) await keeper.record(UNANSWERED, false, holdAs);
}
