/**
 * A replica's part in a brain's limits, without a database: a replica whose lease ran out holds
 * no share until the others count it again, whether or not a call asked for its share while the
 * lease was out (the lease tells the brains it lapsed, and the share comes back only after the
 * sweeps a joining replica waits for); a pause the database could not take is written again.
 */
import type { Pool } from "pg";
import { describe, expect, it } from "vitest";
import { createReplicaBrains } from "../../../src/node/replicas/replica-brains.js";
import { createLogSink } from "../../support/log-sink.js";

const SWEEP_MS = 1_000;

/** The brains of replica-b over `pool`, by `clock` and with its lease as `lease` says. */
function replicaBrains(pool: Pool, clock: { now: number }, lease: { valid: boolean } = { valid: true }) {
  return createReplicaBrains(
    pool,
    "replica-b",
    createLogSink().logger,
    () => clock.now,
    () => lease.valid,
  );
}

/** replica-b beside replica-a, settled (two sweeps apart): a share of 2 of a limit of 4 each. */
function settledReplica() {
  const clock = { now: 0 };
  const lease = { valid: true };
  const brains = replicaBrains({} as Pool, clock, lease);
  const sweep = () =>
    brains.live(
      [
        { id: "replica-a", calls: {} },
        { id: "replica-b", calls: {} },
      ],
      SWEEP_MS,
    );
  sweep();
  clock.now += 2 * SWEEP_MS;
  sweep();
  return { brains, sweep, clock, lease };
}

describe("a replica's brain share across a lapsed lease", () => {
  it("is none from the lapse until two sweeps after it is back, with no call in between", () => {
    const { brains, sweep, clock, lease } = settledReplica();
    expect(brains.share(4, "bot")).toBe(2);

    // Paused past its lease while idle: no call asked for a share meanwhile.
    lease.valid = false;
    brains.lapsed();
    lease.valid = true;
    expect(brains.share(4, "bot")).toBe(0);
    sweep();
    expect(brains.share(4, "bot")).toBe(0);
    clock.now += 2 * SWEEP_MS;
    sweep();
    expect(brains.share(4, "bot")).toBe(2);
  });

  it("is none while the lease is out, even before the lease says it lapsed", () => {
    const { brains, lease } = settledReplica();
    lease.valid = false;
    expect(brains.share(4, "bot")).toBe(0);
  });
});

/**
 * A database as the pauses meet it: each pause written is noted as `target@until`; while `down`,
 * a write fails; `hold(target)` makes the next write of `target` wait until the returned release.
 */
function pauseDatabase() {
  const written: string[] = [];
  const state = { down: true };
  const holds = new Map<string, () => void>();
  const held = new Set<string>();
  const pool = {
    query: (sql: string, params: unknown[] = []) => {
      if (!sql.includes("INSERT INTO webhook_channel.brain_pauses")) return Promise.resolve({ rows: [] });
      if (state.down) return Promise.reject(new Error("connect ECONNREFUSED"));
      const entry = `${String(params[0])}@${String(params[1])}`;
      if (!held.has(String(params[0]))) {
        written.push(entry);
        return Promise.resolve({ rows: [] });
      }
      held.delete(String(params[0]));
      return new Promise((resolve) => {
        holds.set(String(params[0]), () => {
          written.push(entry);
          resolve({ rows: [] });
        });
      });
    },
  } as unknown as Pool;
  return {
    written,
    state,
    hold: (target: string) => held.add(target),
    release: (target: string) => holds.get(target)?.(),
    brains: (clock: { now: number }) => replicaBrains(pool, clock),
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("a brain's pause the database could not take", () => {
  it("is written again at the next sweep while it lasts, and not once it is over", async () => {
    const database = pauseDatabase();
    const clock = { now: 1_000 };
    const brains = database.brains(clock);
    brains.paused("http://bot", 13_000, 429);
    brains.paused("http://other", 2_000, 503);
    await turn();
    expect(database.written).toEqual([]);

    database.state.down = false;
    clock.now = 5_000;
    await brains.readPauses();
    // The pause still running is written; the one already over is dropped.
    expect(database.written).toEqual(["http://bot@13000"]);
    await brains.readPauses();
    expect(database.written).toHaveLength(1);
  });

  it("keeps a newer pause of a target while an older one runs out during a sweep's retries", async () => {
    const database = pauseDatabase();
    const clock = { now: 1_000 };
    const brains = database.brains(clock);
    brains.paused("U", 60_000, 429);
    brains.paused("T", 3_000, 429);
    await turn();

    // The retry of U is slow: meanwhile the old pause of T runs out and a newer one fails.
    database.state.down = false;
    database.hold("U");
    const sweep = brains.readPauses();
    await turn();
    clock.now = 4_000;
    database.state.down = true;
    brains.paused("T", 20_000, 429);
    await turn();
    database.state.down = false;
    database.release("U");
    await sweep;
    await brains.readPauses();
    expect(database.written).toContain("T@20000");
  });
});
