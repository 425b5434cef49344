/**
 * A brain's limits held for the whole service, not per replica: two replicas of the service (in
 * this process) on one Postgres, calling one slow bot over real HTTP. The bot counts the calls it
 * holds at once, and answers 429 when a test says so.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { waitFor } from "../../support/wait-for.js";

let harnesses: ServiceHarness[] = [];
let bot: JsonTestServer | undefined;

afterEach(async () => {
  await Promise.all(harnesses.map((harness) => harness.close()));
  harnesses = [];
  await bot?.close();
  bot = undefined;
});

/** A bot that takes `delayMs` per call, counting how many it holds at once. */
async function slowBot(delayMs: number, answer: () => number = () => 200) {
  let inFlight = 0;
  let most = 0;
  const calledAt: number[] = [];
  const server = await startJsonServer(async () => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    calledAt.push(Date.now());
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    inFlight -= 1;
    const status = answer();
    return status === 200
      ? { status, body: { text: "ok" } }
      : { status, body: { error: "slow down" }, headers: { "retry-after": "3" } };
  });
  bot = server;
  return { server, most: () => most, calledAt };
}

async function twoReplicas(botUrl: string, maxConcurrency: number): Promise<[ServiceHarness, ServiceHarness]> {
  const url = await createTestDatabase(inject("postgresUrl"));
  const start = () =>
    startHarness(
      { delivery: { initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 1000 } },
      {},
      {
        postgres_url_env: "DATABASE_URL",
        routes: [{ channel: "webhook", brain: "bot" }],
        brains: { bot: { type: "http", url: botUrl, max_concurrency: maxConcurrency } },
      },
      { DATABASE_URL: url },
    );
  const first = await start();
  const second = await start();
  harnesses = [first, second];
  return [first, second];
}

describe("brain limits across replicas", () => {
  it("never calls a brain more often at once than its max_concurrency, summed over the replicas", async () => {
    const { server, most } = await slowBot(150);
    const [first, second] = await twoReplicas(`${server.origin}/bot`, 2);
    // Both replicas count each other, each with its share.
    await waitFor(
      () =>
        [first, second].every((harness) =>
          harness.logs.some((line) => line.msg === "replicas share the brains' limits" && line.replicas === 2),
        )
          ? true
          : undefined,
      10_000,
      "both replicas to take their share",
    );
    // Each replica takes the conversations it stores: both call the bot.
    const sent = await Promise.all(
      Array.from({ length: 16 }, async (_, index) => {
        const harness = index % 2 === 0 ? first : second;
        const response = await harness.post({ sender_id: `s${index}`, text: `m${index}` });
        expect(response.status).toBe(200);
      }),
    );
    await waitFor(
      () => (first.replies.length + second.replies.length >= sent.length ? true : undefined),
      30_000,
      "every reply",
    );
    // Both replicas called it (one slot each), and never more than the two slots between them.
    expect(most()).toBe(2);
  });

  it("pauses a brain on every replica within a second of a 429 met by one of them", async () => {
    let limited = true;
    const { server, calledAt } = await slowBot(10, () => (limited ? 429 : 200));
    const [first, second] = await twoReplicas(`${server.origin}/bot`, 4);
    expect((await first.post({ sender_id: "a", text: "hit the limit" })).status).toBe(200);
    await waitFor(
      () => (second.logs.some((line) => String(line.msg).startsWith('brain "bot" paused')) ? true : undefined),
      5_000,
      "the pause to reach the second replica",
    );
    const pausedLine = second.logs.find((line) => String(line.msg).startsWith('brain "bot" paused'));
    expect(pausedLine).toMatchObject({ elsewhere: true, upstream_status: 429 });
    const resumeAt = Date.parse(String(pausedLine?.resume_at));
    const callsBefore = calledAt.length;
    limited = false;
    // The second replica, paused by the first one's 429, calls the bot only once the pause ended.
    expect((await second.post({ sender_id: "b", text: "while paused" })).status).toBe(200);
    await waitFor(
      () => (second.replies.some((reply) => (reply.body as { text?: string }).text === "ok") ? true : undefined),
      15_000,
      "the reply once the pause ended",
    );
    const later = calledAt.slice(callsBefore);
    expect(later.length).toBeGreaterThan(0);
    for (const at of later) expect(at).toBeGreaterThanOrEqual(resumeAt - 50);
  });
});
