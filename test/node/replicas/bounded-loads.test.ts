/**
 * A replica never holds more stored jobs than its buffer: a conversation whose backlog outgrows
 * it (stored by another replica, or left by a replica that stopped) is read in slices as room
 * frees, and delivered whole, in order, with gapless numbers. Two replicas of the real service in
 * this process, one Postgres database, real receivers that refuse until they are let up.
 */
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { ReceivedReply } from "../../../src/node/receiver/sample-receiver.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { expectConversationInOrder, replyBody } from "../../support/reply-checks.js";
import { waitFor } from "../../support/wait-for.js";
import { ADMIN, adminRequest } from "../admin/admin-requests.js";

let harnesses: ServiceHarness[] = [];
const query = pg.Pool.prototype.query;

afterEach(async () => {
  pg.Pool.prototype.query = query;
  await Promise.all(harnesses.map((harness) => harness.close()));
  harnesses = [];
});

/**
 * A replica with its own buffer, and the replies its receiver took: it answers 503 until `up()`,
 * and 400 (a dead letter) to a reply `refused` names.
 */
async function replica(
  databaseUrl: string,
  bufferCapacity: number,
  up: () => boolean,
  refused: (reply: ReceivedReply) => boolean = () => false,
): Promise<{ harness: ServiceHarness; taken: ReceivedReply[] }> {
  const taken: ReceivedReply[] = [];
  const harness = await startHarness(
    {
      buffer_capacity: bufferCapacity,
      delivery: { initial_delay_ms: 20, max_delay_ms: 50, max_attempts: 10_000, circuit_failures: 0 },
    },
    {
      status: (reply) => {
        if (refused(reply)) return 400;
        if (!up()) return 503;
        taken.push(reply);
        return 200;
      },
    },
    { postgres_url_env: "DATABASE_URL", admin: { token_env: "ADMIN_SECRET" } },
    { DATABASE_URL: databaseUrl, ADMIN_SECRET: ADMIN },
  );
  harnesses.push(harness);
  return { harness, taken };
}

/** The replica's accepted messages not yet finished, from its `/readyz`. */
async function depth(harness: ServiceHarness): Promise<number> {
  const response = await fetch(`${harness.baseUrl}/readyz`);
  return ((await response.json()) as { queue: { depth: number } }).queue.depth;
}

/** Samples the replica's depth until `stop()`, resolving with the highest seen. */
async function deepest(harness: ServiceHarness, stop: () => boolean): Promise<number> {
  let highest = 0;
  while (!stop()) {
    highest = Math.max(highest, await depth(harness));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return highest;
}

async function accept(harness: ServiceHarness, conversation: string, text: string): Promise<string> {
  const response = await harness.post({ sender_id: conversation, text });
  expect(response.status).toBe(200);
  return ((await response.json()) as { message_id: string }).message_id;
}

/** Whether every message of `ids` has a reply among `taken`. */
const answered = (taken: readonly ReceivedReply[], ids: readonly string[]): true | undefined => {
  const replied = new Set(taken.map((reply) => replyBody(reply).in_reply_to));
  return ids.every((id) => replied.has(id)) ? true : undefined;
};

describe("a replica's loads of stored jobs", () => {
  it("reads a conversation's backlog stored by another replica in slices no larger than its buffer, and delivers it in order", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    let up = false;
    const owner = await replica(databaseUrl, 10, () => up);
    const other = await replica(databaseUrl, 200, () => up);
    const ids = [await accept(owner.harness, "long", "m0")];
    // The owner holds the conversation: the other replica's messages are handed to it.
    for (let index = 1; index <= 40; index += 1) ids.push(await accept(other.harness, "long", `m${index}`));
    await waitFor(
      async () => ((await depth(owner.harness)) === 10 ? true : undefined),
      10_000,
      "the owner's buffer full",
    );
    let done = false;
    const sampled = deepest(owner.harness, () => done);
    up = true;
    await waitFor(() => answered(owner.taken, ids), 30_000, "every reply");
    done = true;
    expect(await sampled).toBeLessThanOrEqual(10);
    expect(other.taken).toEqual([]);
    expectConversationInOrder(owner.taken, "long", ids);
  }, 60_000);

  it("takes over a stopped replica's backlog larger than its own buffer in slices, and delivers it in order", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    let up = false;
    const first = await replica(databaseUrl, 100, () => up);
    const second = await replica(databaseUrl, 10, () => up);
    const ids: string[] = [];
    for (let index = 0; index < 40; index += 1) ids.push(await accept(first.harness, "big", `m${index}`));
    await first.harness.service.stop(0);
    await waitFor(
      async () => ((await depth(second.harness)) === 10 ? true : undefined),
      10_000,
      "the takeover's first slice",
    );
    let done = false;
    const sampled = deepest(second.harness, () => done);
    up = true;
    await waitFor(() => answered(second.taken, ids), 30_000, "every reply");
    done = true;
    expect(await sampled).toBeLessThanOrEqual(10);
    expectConversationInOrder(second.taken, "big", ids);
  }, 60_000);

  it("takes over many conversations of a stopped replica at once without loading more than its buffer", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    let up = false;
    const first = await replica(databaseUrl, 100, () => up);
    const second = await replica(databaseUrl, 10, () => up);
    const byConversation = new Map<string, string[]>();
    for (let index = 0; index < 40; index += 1) {
      const conversation = `c${index % 5}`;
      const ids = byConversation.get(conversation) ?? [];
      ids.push(await accept(first.harness, conversation, `m${index}`));
      byConversation.set(conversation, ids);
    }
    await first.harness.service.stop(0);
    let done = false;
    const sampled = deepest(second.harness, () => done);
    await waitFor(
      async () => ((await depth(second.harness)) >= 10 ? true : undefined),
      10_000,
      "the takeover's first slices",
    );
    up = true;
    const all = [...byConversation.values()].flat();
    await waitFor(() => answered(second.taken, all), 30_000, "every reply");
    done = true;
    expect(await sampled).toBeLessThanOrEqual(10);
    for (const [conversation, ids] of byConversation) expectConversationInOrder(second.taken, conversation, ids);
  }, 60_000);

  it("reads, taking over many conversations at once, no more stored jobs into the process than its free room", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    const first = await replica(databaseUrl, 1000, () => false);
    const second = await replica(databaseUrl, 5, () => false);
    for (let index = 0; index < 240; index += 1) await accept(first.harness, `c${index % 40}`, `m${index}`);
    // The rows each read of stored jobs brings into the process (the reads that follow a position).
    const reads: number[] = [];
    pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
      const result = (query as (...given: unknown[]) => unknown).apply(this, args);
      const config = args[0] as string | { text?: string } | undefined;
      const text = typeof config === "string" ? config : config?.text;
      if (text?.includes("j.seq > t.after") === true && result instanceof Promise) {
        result.then(
          (answer: { rows: unknown[] }) => reads.push(answer.rows.length),
          () => undefined,
        );
      }
      return result;
    } as typeof query;
    await first.harness.service.stop(0);
    await waitFor(async () => ((await depth(second.harness)) === 5 ? true : undefined), 10_000, "the first slice");
    await waitFor(() => (reads.length > 0 ? true : undefined), 10_000, "a read");
    expect(Math.max(...reads)).toBeLessThanOrEqual(5);
  }, 60_000);

  it("places a bulk replay into taken-over conversations with backlogs without holding more than its buffer", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    let up = false;
    let refusing = true;
    const refused = (reply: ReceivedReply) => refusing && (reply.body as { text?: string }).text === "dead";
    const first = await replica(databaseUrl, 100, () => up, refused);
    const second = await replica(databaseUrl, 5, () => up, refused);
    const conversations = ["c0", "c1", "c2", "c3", "c4"];
    const dead: string[] = [];
    for (const conversation of conversations) {
      const id = await accept(first.harness, conversation, "dead");
      await waitFor(
        async () =>
          (await adminRequest(first.harness, `/admin/dead-letters/${id}`)).status === 200 ? true : undefined,
        10_000,
        "a dead letter",
      );
      dead.push(id);
    }
    const byConversation = new Map<string, string[]>();
    for (let index = 0; index < 40; index += 1) {
      const conversation = conversations[index % 5] ?? "";
      byConversation.set(conversation, [
        ...(byConversation.get(conversation) ?? []),
        await accept(first.harness, conversation, `m${index}`),
      ]);
    }
    refusing = false;
    await first.harness.service.stop(0);
    let done = false;
    const sampled = deepest(second.harness, () => done);
    const replayed = await adminRequest(second.harness, "/admin/dead-letters/replay", { method: "POST" });
    expect(await replayed.json()).toEqual({ replayed: 5 });
    await waitFor(async () => ((await depth(second.harness)) === 5 ? true : undefined), 10_000, "a full buffer");
    up = true;
    const all = [...[...byConversation.values()].flat(), ...dead];
    await waitFor(() => answered(second.taken, all), 30_000, "every reply");
    done = true;
    expect(await sampled).toBeLessThanOrEqual(5);
    // Each conversation: its backlog in order, then its replayed letter, numbered on from the
    // number its letter was given before it died.
    for (const [index, conversation] of conversations.entries()) {
      const order = [...(byConversation.get(conversation) ?? []), dead[index] ?? ""];
      expectConversationInOrder(second.taken, conversation, order, 2);
    }
  }, 60_000);
});
