/**
 * The receiver circuit's cases over `state_dir`'s store: every keeper on a connection of its own
 * to one file, over a channel no other case uses; and the circuit as a restarted service finds it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CircuitState } from "../../../../src/core/receiver/receiver-circuit.js";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import { createSqliteCircuitStore } from "../../../../src/node/state/sqlite/sqlite-circuit-store.js";
import { openStateDb, type StateDb } from "../../../../src/node/state/sqlite/sqlite-state.js";
import { circuitCases } from "../../../shared/circuit-cases.js";
import { createLogSink } from "../../../support/log-sink.js";

const dirs: string[] = [];
const dbs: StateDb[] = [];

afterAll(async () => {
  for (const db of dbs.splice(0)) db.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-circuits-"));
  dirs.push(dir);
  return dir;
}

circuitCases("SQLite", {
  stores: async () => {
    const dir = await freshDir();
    return {
      channel: `channel-${crypto.randomUUID()}`,
      open: () => {
        const db = openStateDb(dir);
        dbs.push(db);
        return createSqliteCircuitStore(db);
      },
    };
  },
});

describe("the receiver circuit in state_dir", () => {
  it("finds a receiver down after a restart as it was left, probe schedule included", async () => {
    const dir = await freshDir();
    const down: CircuitState = {
      failures: 5,
      down: { since: 1_000, probeAt: 9_000, probes: 2 },
      target: "http://r.test",
    };
    const first = openSqliteBackend(dir, createLogSink().logger);
    expect(await first.circuits.write("webhook", down, 0)).toBe(true);
    await first.close();
    const restarted = openSqliteBackend(dir, createLogSink().logger);
    try {
      expect(await restarted.circuits.read("webhook")).toEqual({ state: down, version: 1 });
      // A write over a version read before the restart no longer lands.
      expect(await restarted.circuits.write("webhook", { failures: 0 }, 0)).toBe(false);
    } finally {
      await restarted.close();
    }
  });

  it("refuses a circuit write of a process another one took the file from", async () => {
    const dir = await freshDir();
    const older = openSqliteBackend(dir, createLogSink().logger);
    const newer = openSqliteBackend(dir, createLogSink().logger);
    try {
      expect(() => older.circuits.write("webhook", { failures: 1 }, 0)).toThrow(
        expect.objectContaining({ code: "lane_fenced" }),
      );
      expect(await newer.circuits.write("webhook", { failures: 1 }, 0)).toBe(true);
    } finally {
      await older.close();
      await newer.close();
    }
  });
});
