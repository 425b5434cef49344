import type { CircuitStore } from "../../../core/receiver/circuit-store.js";
import { type CircuitState, RECEIVER_UP } from "../../../core/receiver/receiver-circuit.js";
import type { StateDb } from "./sqlite-state.js";

/**
 * The receiver circuits of `state_dir`: a row per channel, so that a receiver known down is
 * still known down after a restart (its replies wait, spending no attempts, and the probe keeps
 * its schedule). A write lands only over the version it read, as on Postgres, and behind `fence`
 * (the file's epoch), so a process another one took the file from writes no circuit either. It
 * commits on its own, outside the group commit: the circuit is written only when something is
 * wrong (a failed POST while up, a probe), and a healthy receiver costs no statement.
 */
export function createSqliteCircuitStore(db: StateDb, fence?: () => void): CircuitStore {
  const select = db.prepare<[string], { state: string; version: number }>(
    "SELECT state, version FROM receivers WHERE channel = ?",
  );
  const write = db.prepare<[string, string, number, number]>(
    `INSERT INTO receivers (channel, state, version) VALUES (?, ?, ? + 1)
     ON CONFLICT (channel) DO UPDATE SET state = excluded.state, version = excluded.version
     WHERE receivers.version = ?`,
  );
  // The service opened the file under a new epoch: a probe out is an earlier process's, which
  // ended with it. Release it, so that the first probe keeps the circuit's schedule instead of
  // waiting for the dead probe's time limit.
  db.prepare(
    `UPDATE receivers SET state = json_remove(state, '$.down.probingUntil'), version = version + 1
     WHERE json_extract(state, '$.down.probingUntil') IS NOT NULL`,
  ).run();
  const fencedWrite = db.transaction((channel: string, state: string, version: number): boolean => {
    fence?.();
    return write.run(channel, state, version, version).changes > 0;
  });
  return {
    read(channel) {
      const row = select.get(channel);
      if (row === undefined) return { state: RECEIVER_UP, version: 0 };
      return { state: JSON.parse(row.state) as CircuitState, version: row.version };
    },
    write(channel, state, version) {
      // The write lock first (see the group commit): another writer's lock is waited for.
      return fencedWrite.immediate(channel, JSON.stringify(state), version);
    },
  };
}
