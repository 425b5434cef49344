/**
 * A load balancer sends nothing to a replica whose `/readyz` says it cannot take writes, so
 * that answer must come back to `ready` by itself once the database does: a readiness that
 * waited for the next accepted message to clear a failed write would never see one.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase, type PostgresCluster, startPostgresCluster } from "../../support/postgres-cluster.js";
import { waitFor } from "../../support/wait-for.js";

let cluster: PostgresCluster | undefined;
let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await cluster?.stop();
  harness = undefined;
  cluster = undefined;
});

async function readyStatus(): Promise<string | undefined> {
  const response = await fetch(`${harness?.baseUrl}/readyz`);
  return ((await response.json()) as { status: string }).status;
}

describe("/readyz after a Postgres outage with no traffic", () => {
  it("is ready again once the database is, though no message has been written since a write failed", async () => {
    cluster = await startPostgresCluster();
    const url = await createTestDatabase(cluster.url);
    harness = await startHarness(
      {},
      { status: () => 200 },
      { postgres_url_env: "DATABASE_URL" },
      { DATABASE_URL: url },
    );
    expect((await harness.post({ sender_id: "a", text: "before" })).status).toBe(200);

    await cluster.halt();
    // The first message after the cut fails its write (the probe has not seen the outage yet)
    // or is refused by the probe's finding; either way the replica is unavailable.
    const refused = await waitFor(async () => {
      const response = await harness?.post({ sender_id: "a", text: "during" });
      return response !== undefined && response.status !== 200 ? response : undefined;
    }, 10_000);
    expect(refused.status).toBe(503);
    await waitFor(async () => ((await readyStatus()) === "unavailable" ? true : undefined), 10_000, "unavailable");

    await cluster.resume();
    await waitFor(
      async () => ((await readyStatus()) === "ready" ? true : undefined),
      10_000,
      "/readyz ready with no message sent",
    );
    expect((await harness.post({ sender_id: "a", text: "after" })).status).toBe(200);
  }, 60_000);
});
