import type { CircuitState } from "./receiver-circuit.js";

/** A channel's circuit as stored, with the version a write must name. */
export interface StoredCircuit {
  readonly state: CircuitState;
  readonly version: number;
}

/**
 * Where a channel's receiver circuit is kept: in memory for one process, one row shared by the
 * replicas on Postgres (so that one probe tries the receiver for the whole service and every
 * replica holds while it is down), the receiver object's storage on Workers. A store keeps the
 * state and nothing else: the core's `CircuitKeeper` decides every change, and writes it only
 * over the version it read, so two replicas ruling at once never lose a change.
 */
export interface CircuitStore {
  /** The channel's circuit as stored: up, version 0, when nothing was. */
  read(channel: string): StoredCircuit | Promise<StoredCircuit>;
  /** Writes `state` if the stored circuit is still at `version`; false when another writer moved it. */
  write(channel: string, state: CircuitState, version: number): boolean | Promise<boolean>;
}

/**
 * The lanes of a channel held for its receiver, in the order they began to wait. Each runtime
 * holds its own: a Node process its lanes (in memory), the receiver object on Workers every
 * conversation object of the channel (in its storage).
 */
export interface HeldLanes {
  /** Adds a lane at the end, unless it waits already. */
  add(key: string): void | Promise<void>;
  /** Puts a lane back first in line (its wake-up failed). */
  addFirst(key: string): void | Promise<void>;
  /** Removes and returns the `limit` lanes that have waited longest. */
  take(limit: number): readonly string[] | Promise<readonly string[]>;
  /** A lane no longer waits (it runs again by its own timer). */
  delete(key: string): void | Promise<void>;
  count(): number | Promise<number>;
}
