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

/** A replica on the database at `url`, calling the bot at `botUrl`; closed after the test. */
async function replica(url: string, botUrl: string, maxConcurrency: number): Promise<ServiceHarness> {
  const harness = await startHarness(
    { delivery: { initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 1000 } },
    {},
    {
      postgres_url_env: "DATABASE_URL",
      routes: [{ channel: "webhook", brain: "bot" }],
      brains: { bot: { type: "http", url: botUrl, max_concurrency: maxConcurrency, timeout_ms: 30_000 } },
    },
    { DATABASE_URL: url },
  );
  harnesses.push(harness);
  return harness;
}

async function twoReplicas(
  botUrl: string,
  maxConcurrency: number,
  url?: string,
): Promise<[ServiceHarness, ServiceHarness]> {
  const database = url ?? (await createTestDatabase(inject("postgresUrl")));
  return [await replica(database, botUrl, maxConcurrency), await replica(database, botUrl, maxConcurrency)];
}

/** Waits until `harness` logged its share among `replicas` replicas. */
async function sharing(harness: ServiceHarness, replicas: number): Promise<void> {
  await waitFor(
    () =>
      harness.logs.some((line) => line.msg === "replicas share the brains' limits" && line.replicas === replicas)
        ? true
        : undefined,
    15_000,
    `a share among ${replicas} replicas`,
  );
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

  it("keeps to max_concurrency when a replica joins while the others hold calls begun under their larger shares", async () => {
    // Calls far longer than a join takes to settle (two sweeps): the first two replicas still
    // hold them when the third takes its share.
    const { server, most } = await slowBot(6_000);
    const url = await createTestDatabase(inject("postgresUrl"));
    const [first, second] = await twoReplicas(`${server.origin}/bot`, 4, url);
    await sharing(first, 2);
    await sharing(second, 2);
    for (let index = 0; index < 4; index += 1) {
      const harness = index % 2 === 0 ? first : second;
      expect((await harness.post({ sender_id: `early${index}`, text: "slow" })).status).toBe(200);
    }
    await waitFor(() => (most() === 4 ? true : undefined), 10_000, "four calls in flight");
    const third = await replica(url, `${server.origin}/bot`, 4);
    await sharing(third, 3);
    // The third replica runs the conversations it stores; its share of the four slots frees only
    // as the others' older calls end.
    for (let index = 0; index < 3; index += 1) {
      expect((await third.post({ sender_id: `late${index}`, text: "slow" })).status).toBe(200);
    }
    await waitFor(() => (third.replies.length === 3 ? true : undefined), 40_000, "the third replica's replies");
    expect(first.replies.length + second.replies.length).toBe(4);
    expect(most()).toBe(4);
  }, 60_000);

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
