/**
 * The Node service on a Postgres cluster of the test's own, which the test stops (fast
 * shutdown: every connection is cut) and starts again on the same port, as a database
 * restart or a failover does. Once its probe has found the database gone, the service refuses
 * new messages without asking it.
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

describe("postgres_url_env when the database goes away", () => {
  it("answers 503 state_unavailable with Retry-After and says so in /readyz, then recovers by itself, losing nothing it accepted", async () => {
    cluster = await startPostgresCluster();
    const url = await createTestDatabase(cluster.url);
    let receiverUp = false;
    harness = await startHarness(
      { delivery: { initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 1000, circuit_failures: 0 } },
      { status: () => (receiverUp ? 200 : 503) },
      { postgres_url_env: "DATABASE_URL" },
      { DATABASE_URL: url },
    );
    const accepted: string[] = [];
    for (let index = 0; index < 10; index += 1) {
      const response = await harness.post({ sender_id: `s${index % 3}`, text: `before ${index}` });
      expect(response.status).toBe(200);
      accepted.push(((await response.json()) as { message_id: string }).message_id);
    }

    await cluster.halt();
    const refused = await waitFor(async () => {
      const response = await harness?.post({ sender_id: "s0", text: "during" });
      if (response === undefined) return undefined;
      if (response.status === 200) {
        // Answered from a connection the cut had not reached yet: accepted all the same.
        accepted.push(((await response.json()) as { message_id: string }).message_id);
        return undefined;
      }
      return response;
    }, 10_000);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(((await refused.json()) as { code: string }).code).toBe("state_unavailable");
    const ready = await waitFor(async () => {
      const response = await fetch(`${harness?.baseUrl}/readyz`);
      const body = (await response.json()) as { status: string };
      return body.status === "unavailable" ? { response, body } : undefined;
    }, 10_000);
    expect(ready.response.status).toBe(503);
    // Once its probe has found the database gone (within a second or so), the replica refuses
    // before it asks anything of the database, a key's lookup included.
    const keyed = await waitFor(async () => {
      const response = await harness?.post({ sender_id: "s2", text: "keyed" }, { "idempotency-key": "during-outage" });
      const body = (await response?.json()) as { code?: string; detail?: string } | undefined;
      return body?.detail?.includes("database cannot take writes") === true ? { response, body } : undefined;
    }, 10_000);
    expect(keyed.response?.status).toBe(503);
    expect(keyed.response?.headers.get("retry-after")).toBe("5");
    expect(keyed.body.code).toBe("state_unavailable");

    await cluster.resume();
    receiverUp = true;
    const after = await waitFor(async () => {
      const response = await harness?.post({ sender_id: "s1", text: "after" });
      if (response?.status !== 200) return undefined;
      return (await response.json()) as { message_id: string };
    }, 20_000);
    accepted.push(after.message_id);
    const answered = () =>
      new Set(harness?.replies.map((reply) => (reply.body as { in_reply_to: string }).in_reply_to) ?? []);
    await waitFor(
      () => (accepted.every((id) => answered().has(id)) ? true : undefined),
      20_000,
      "every accepted message delivered",
    );
    // The state's probe runs every second: /readyz follows within a few.
    await waitFor(
      async () => {
        const response = await fetch(`${harness?.baseUrl}/readyz`);
        return ((await response.json()) as { status: string }).status === "ready" ? true : undefined;
      },
      5_000,
      "/readyz ready again",
    );
  }, 60_000);
});
