import type pg from "pg";
import type { CircuitStore } from "../../../core/receiver/circuit-store.js";
import { type CircuitState, RECEIVER_UP } from "../../../core/receiver/receiver-circuit.js";
import { asStateError } from "./postgres-state-error.js";

// A write lands only over the version it read: the first write of a channel inserts (version 0
// read as "no row"), and of two replicas writing at once one finds the version moved.
const WRITE = `INSERT INTO webhook_channel.receivers AS r (channel, state, version) VALUES ($1, $2, $3 + 1)
ON CONFLICT (channel) DO UPDATE SET state = excluded.state, version = excluded.version
WHERE r.version = $3`;

/**
 * The receiver circuits of `postgres_url_env`: one row per channel that every replica reads and
 * writes, so that the service has one circuit per receiver, one probe out at a time for all the
 * replicas, and every replica holds its conversations while the receiver is down. It is asked
 * only when something is wrong (a failure, the probe, a held lane): a healthy receiver costs no
 * statement.
 */
export function createPostgresCircuitStore(pool: pg.Pool): CircuitStore {
  return {
    async read(channel) {
      try {
        const result = await pool.query<{ state: string; version: string }>(
          "SELECT state, version FROM webhook_channel.receivers WHERE channel = $1",
          [channel],
        );
        const row = result.rows[0];
        if (row === undefined) return { state: RECEIVER_UP, version: 0 };
        return { state: JSON.parse(row.state) as CircuitState, version: Number(row.version) };
      } catch (error) {
        throw asStateError(error);
      }
    },
    async write(channel, state, version) {
      try {
        const result = await pool.query(WRITE, [channel, JSON.stringify(state), version]);
        return (result.rowCount ?? 0) > 0;
      } catch (error) {
        throw asStateError(error);
      }
    },
  };
}
