/**
 * A replay being taken (Postgres, replicas) must not make a channel with free room refuse
 * new messages as `buffer_full`: the buffer is not full.
 */
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { waitFor } from "../../support/wait-for.js";
import { ADMIN, adminRequest } from "../admin/admin-requests.js";

let harnesses: ServiceHarness[] = [];
const clientQuery = pg.Client.prototype.query;

afterEach(async () => {
  pg.Client.prototype.query = clientQuery;
  await Promise.all(harnesses.map((harness) => harness.close()));
  harnesses = [];
});

describe("a replay taken on a replica", () => {
  it("leaves the channel's free room to new messages while the take's transaction runs", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    const harness = await startHarness(
      { buffer_capacity: 1000 },
      { status: (reply) => ((reply.body as { text?: string }).text === "dead" ? 400 : 200) },
      { postgres_url_env: "DATABASE_URL", admin: { token_env: "ADMIN_SECRET" } },
      { DATABASE_URL: databaseUrl, ADMIN_SECRET: ADMIN },
    );
    harnesses.push(harness);
    const posted = await harness.post({ sender_id: "c0", text: "dead" });
    expect(posted.status).toBe(200);
    const id = ((await posted.json()) as { message_id: string }).message_id;
    await waitFor(
      async () => ((await adminRequest(harness, `/admin/dead-letters/${id}`)).status === 200 ? true : undefined),
      10_000,
      "a dead letter",
    );
    // The take's UPDATE (inside its transaction, after the room was counted) is slow: a busy database.
    let inTake = false;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text?: string } | undefined;
      const text = typeof config === "string" ? config : config?.text;
      if (text?.includes("SET state = 'pending', stored_by") === true) {
        inTake = true;
        return new Promise((resolve) => setTimeout(resolve, 1_500)).then(() =>
          (clientQuery as (...given: unknown[]) => unknown).apply(this, args),
        );
      }
      return (clientQuery as (...given: unknown[]) => unknown).apply(this, args);
    } as typeof clientQuery;
    const replayed = await adminRequest(harness, "/admin/dead-letters/replay", { method: "POST" });
    expect(await replayed.json()).toEqual({ replayed: 1 });
    await waitFor(() => (inTake ? true : undefined), 10_000, "the take under way");
    // One message in a buffer of 1000 is being replayed: a new message has room.
    const fresh = await harness.post({ sender_id: "c1", text: "hello" });
    const body = await fresh.text();
    expect(`${fresh.status} ${body}`).toMatch(/^200 /);
  }, 60_000);
});
