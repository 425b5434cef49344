/**
 * A connection the server ends while a transaction holds it (a database restart, a failover, an
 * administrator's `pg_terminate_backend`): pg reports it as an `error` event on the client, which
 * a checked-out pool client has no listener for, so it would be thrown as an uncaught exception
 * and end the process. `inTransaction` listens for it and rejects instead.
 */
import { describe, expect, it } from "vitest";
import { inTransaction } from "../../../../src/node/state/postgres/postgres-pool.js";
import { migratedDatabase } from "./fresh-postgres.js";

describe("inTransaction when the server ends its connection", () => {
  it("rejects with the connection's end instead of throwing it out of the event loop", async () => {
    const { pool } = await migratedDatabase();
    const ran = inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await pool.query("SELECT pg_terminate_backend($1)", [rows[0]?.pid]);
      // Between two statements, as a transaction's work may be: the end arrives meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await client.query("SELECT 1");
    });
    await expect(ran).rejects.toThrow(/connection/i);
    // The pool goes on with a new connection.
    expect((await pool.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });
});
