/**
 * A job that waits for a retry (a receiver's Retry-After, a long backoff) keeps its due time
 * across a restart, with `state_dir` and on Postgres (where a replica taking the conversation
 * over loads it the same way): the next process posts it at that time, not at once, and a
 * retry already due when the process starts goes at once.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { waitFor } from "../../support/wait-for.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Where both processes keep their state: the config's part and the environment it needs. */
interface State {
  readonly extra: Record<string, unknown>;
  readonly env: Record<string, string>;
}

async function stateDir(): Promise<State> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-retry-due-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return { extra: { state_dir: dir }, env: {} };
}

async function postgres(): Promise<State> {
  const url = await createTestDatabase(inject("postgresUrl"));
  return { extra: { postgres_url_env: "DATABASE_URL" }, env: { DATABASE_URL: url } };
}

const delivery = { initial_delay_ms: 50, max_delay_ms: 60_000, circuit_failures: 0 };

/** A first process whose receiver answers 503 Retry-After `seconds`; resolves with the time of that answer, once it stopped. */
async function firstRun(state: State, seconds: number): Promise<number> {
  const answered: number[] = [];
  const first: ServiceHarness = await startHarness(
    { delivery },
    {
      status: () => {
        answered.push(Date.now());
        return { status: 503, headers: { "retry-after": String(seconds) } };
      },
    },
    state.extra,
    state.env,
  );
  const post = await first.post({ sender_id: "alice", text: "hello" });
  expect(post.status).toBe(200);
  const at = await waitFor(() => answered[0], 5_000, "the first POST");
  await first.close();
  return at;
}

async function secondRun(state: State): Promise<{ harness: ServiceHarness; postedAt: number[] }> {
  const postedAt: number[] = [];
  const harness = await startHarness(
    { delivery },
    { onReply: () => postedAt.push(Date.now()) },
    state.extra,
    state.env,
  );
  cleanups.push(() => harness.close());
  return { harness, postedAt };
}

describe.each([
  ["with a state_dir", stateDir],
  ["on Postgres", postgres],
])("a retry's due time across a restart, %s", (_, fresh) => {
  it("posts a retry that a receiver's Retry-After put off at its due time after a restart, not at once", async () => {
    const state = await fresh();
    const firstAt = await firstRun(state, 4);
    const { postedAt } = await secondRun(state);
    const at = await waitFor(() => postedAt[0], 10_000, "the retried POST");
    // Retry-After: 4 s from the 503; a little slack for the clock's rounding.
    expect(at - firstAt).toBeGreaterThanOrEqual(4_000 - 50);
  }, 20_000);

  it("posts a retry that came due while the service was stopped at once after the restart", async () => {
    const state = await fresh();
    const firstAt = await firstRun(state, 1);
    // Due one second after the 503: wait past that before the start.
    await waitFor(() => (Date.now() - firstAt > 1_200 ? true : undefined), 5_000, "the due time to pass");
    const startedAt = Date.now();
    const { postedAt } = await secondRun(state);
    const at = await waitFor(() => postedAt[0], 10_000, "the retried POST");
    expect(at - startedAt).toBeLessThan(3_000);
  }, 20_000);
});
