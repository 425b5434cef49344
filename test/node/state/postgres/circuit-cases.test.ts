/**
 * The receiver circuit's cases over the Postgres store: every keeper on a pool of its own, as
 * replicas are, over the one row of a channel no other case uses.
 */
import { beforeAll } from "vitest";
import { createPostgresCircuitStore } from "../../../../src/node/state/postgres/postgres-circuit-store.js";
import { circuitCases } from "../../../shared/circuit-cases.js";
import { migratedDatabase, poolOn } from "./fresh-postgres.js";

let url = "";

beforeAll(async () => {
  ({ url } = await migratedDatabase());
});

circuitCases("Postgres", {
  stores: async () => ({
    channel: `channel-${crypto.randomUUID()}`,
    open: () => createPostgresCircuitStore(poolOn(url)),
  }),
});
