/**
 * Whether a failed write may have been committed, told from the errors a real server and a real
 * client give: the server's ERROR rolls the write back; no answer, or a session the server ended,
 * leaves it open.
 */
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { asStateError, mayHaveCommitted } from "../../../../src/node/state/postgres/postgres-state-error.js";

async function failureOf(run: (client: pg.Client) => Promise<unknown>): Promise<unknown> {
  const client = new pg.Client({ connectionString: inject("postgresUrl") });
  client.on("error", () => undefined);
  await client.connect();
  try {
    await run(client);
  } catch (error) {
    return error;
  } finally {
    await client.end().catch(() => undefined);
  }
  throw new Error("the statement did not fail");
}

describe("mayHaveCommitted", () => {
  it("is false for the server's ERROR, also as the state_unavailable refusal that carries it", async () => {
    const error = await failureOf((client) => client.query("SELECT 1 / 0"));
    expect(mayHaveCommitted(error)).toBe(false);
    expect(mayHaveCommitted(asStateError(error))).toBe(false);
  });

  it("is false for a write a read-only transaction refused", async () => {
    const error = await failureOf(async (client) => {
      await client.query("SET default_transaction_read_only = on");
      await client.query("CREATE TABLE refused (n int)");
    });
    expect(error).toMatchObject({ code: "25006" });
    expect(mayHaveCommitted(asStateError(error))).toBe(false);
  });

  it("is false for a named statement whose plan changed shape under a migration, or that the session lost", async () => {
    const reshaped = await failureOf(async (client) => {
      await client.query("CREATE TEMP TABLE reshaped (n int)");
      const named = { name: "reshaped_rows", text: "SELECT * FROM reshaped" };
      await client.query(named);
      await client.query("ALTER TABLE reshaped ADD COLUMN m int");
      await client.query(named);
    });
    expect(reshaped).toMatchObject({ code: "0A000" });
    expect(mayHaveCommitted(asStateError(reshaped))).toBe(false);

    const lost = await failureOf(async (client) => {
      const named = { name: "lost_rows", text: "SELECT 1" };
      await client.query(named);
      await client.query("DEALLOCATE lost_rows");
      await client.query(named);
    });
    expect(lost).toMatchObject({ code: "26000" });
    expect(mayHaveCommitted(asStateError(lost))).toBe(false);
  });

  it("is true when no answer came in time", async () => {
    const error = await failureOf((client) =>
      client.query({ text: "SELECT pg_sleep(5)", query_timeout: 100 } as pg.QueryConfig),
    );
    expect(mayHaveCommitted(asStateError(error))).toBe(true);
  });

  it("is true when the server ended the session (FATAL), which may follow a commit", async () => {
    const error = await failureOf(async (client) => {
      const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
      const other = new pg.Client({ connectionString: inject("postgresUrl") });
      await other.connect();
      try {
        // Its failure is taken at once: it comes while the other client's statement runs.
        const sleeping = client.query("SELECT pg_sleep(5)").then(
          () => undefined,
          (error: unknown) => error,
        );
        await other.query("SELECT pg_terminate_backend($1)", [pid]);
        const failure = await sleeping;
        if (failure !== undefined) throw failure;
      } finally {
        await other.end();
      }
    });
    expect(error).toMatchObject({ severity: "FATAL", code: "57P01" });
    expect(mayHaveCommitted(asStateError(error))).toBe(true);
  });
});
