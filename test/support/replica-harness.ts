/**
 * One replica of the service in this process on a Postgres database (the harness of
 * `node-service.ts` with `postgres_url_env`), and what a test reads of its lane rows.
 */
import type pg from "pg";
import type { ReceiverOptions } from "../../src/node/receiver/sample-receiver.js";
import { type ServiceHarness, startHarness } from "./node-service.js";

/** A conversation's row in `webhook_channel.lanes`: who runs it, under which claim. */
export interface LaneRow {
  readonly owner: string | null;
  readonly epoch: string;
}

/** Starts one replica on the database at `url`, with a lease of `leaseMs`, and a receiver with `receiver`'s options. */
export function startReplicaHarness(
  url: string,
  leaseMs: number,
  receiver: ReceiverOptions = {},
): Promise<ServiceHarness> {
  return startHarness(
    {},
    receiver,
    { postgres_url_env: "DATABASE_URL" },
    { DATABASE_URL: url },
    { replicaLeaseMs: leaseMs },
  );
}

/** The lane row of the only conversation the database has (undefined before its first claim). */
export async function onlyLane(client: pg.Client): Promise<LaneRow | undefined> {
  return (await client.query<LaneRow>("SELECT owner, epoch FROM webhook_channel.lanes")).rows[0];
}
