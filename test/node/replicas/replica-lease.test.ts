/**
 * A replica's lease across a database that stopped answering past the lease and then answered
 * again (a partition that heals: TCP delivers what it held): the renewal the replica gave up on
 * is committed late, and renews the row before the replica's next renewal reads it. The replica
 * takes stock all the same, since its own lease ran out meanwhile and others may have taken its
 * conversations.
 */
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { ReplicaLease } from "../../../src/node/replicas/replica-lease.js";
import { createLogSink } from "../../support/log-sink.js";
import { gateInFront, type TcpGate } from "../../support/tcp-gate.js";
import { waitFor } from "../../support/wait-for.js";
import { migratedDatabase } from "../state/postgres/fresh-postgres.js";

const LEASE_MS = 1_000;

let gate: TcpGate | undefined;
let lease: ReplicaLease | undefined;

afterEach(async () => {
  gate?.release();
  await lease?.stop();
  await gate?.close();
  lease = undefined;
  gate = undefined;
});

describe("a replica's lease", () => {
  it("takes stock once its lease ran out here, though a renewal given up on renewed the row late", async () => {
    const { url, pool } = await migratedDatabase();
    const gated = await gateInFront(url);
    gate = gated.gate;
    const { logger, lines } = createLogSink();
    const lapses: number[] = [];
    const validity: boolean[] = [];
    lease = new ReplicaLease({
      url: gated.url,
      replica: "rlate",
      leaseMs: LEASE_MS,
      logger,
      onNotify: () => undefined,
      onPause: () => undefined,
      onConnected: () => undefined,
      onValidity: (valid) => validity.push(valid),
      onLapsed: () => lapses.push(Date.now()),
    });
    // A renewal sent while the one before still runs would be queued behind it on the connection.
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on("warning", onWarning);
    onTestFinished(() => void process.off("warning", onWarning));
    await lease.start();
    expect(lease.isValid()).toBe(true);

    // The database stops answering: the renewal under way is held, given up on, and its
    // connection dropped; the lease runs out here, and its row too.
    gate.hold();
    await waitFor(() => (validity.includes(false) ? true : undefined), 5 * LEASE_MS, "the lease to run out here");
    const dropped = (): true | undefined =>
      lines.some((line) => line.msg === "replica lease connection lost; reconnecting") ? true : undefined;
    await waitFor(dropped, 5 * LEASE_MS, "the renewal given up on");
    await waitFor(
      async () => {
        const row = await pool.query<{ lapsed: boolean }>(
          "SELECT lease_until < now() AS lapsed FROM webhook_channel.replicas WHERE id = 'rlate'",
        );
        return row.rows[0]?.lapsed === true ? true : undefined;
      },
      5 * LEASE_MS,
      "the row's lease to run out",
    );
    gate.release();
    // What was held reaches the database: the late renewal commits and moves the row on.
    await waitFor(() => (lease?.isValid() === true ? true : undefined), 10 * LEASE_MS, "the lease renewed");
    expect(lapses.length).toBe(1);
    const row = await pool.query<{ live: boolean }>(
      "SELECT lease_until > now() AS live FROM webhook_channel.replicas WHERE id = 'rlate'",
    );
    expect(row.rows[0]?.live).toBe(true);
    expect(warnings.filter((message) => message.includes("already executing a query"))).toEqual([]);
  });
});
