/**
 * Two replicas of the service in this process on one Postgres database, each with its own
 * receiver-facing client: what a graceful stop hands over, and what the replicas share.
 */
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { waitFor } from "../../support/wait-for.js";

let harnesses: ServiceHarness[] = [];

afterEach(async () => {
  await Promise.all(harnesses.map((harness) => harness.close()));
  harnesses = [];
});

interface Reply {
  readonly in_reply_to: string;
  readonly conversation_id: string;
  readonly sequence: number;
}

let databaseUrl = "";

/** The hand-over case's lease, long beside what a hand-over takes on a loaded machine. */
const LONG_LEASE_MS = 15_000;

/** The replicas' lease: the service's default of 5 s unless a case sets another. */
async function twoReplicas(
  receiverUp: () => boolean,
  replicaLeaseMs?: number,
): Promise<[ServiceHarness, ServiceHarness]> {
  const url = await createTestDatabase(inject("postgresUrl"));
  databaseUrl = url;
  const start = () =>
    startHarness(
      { delivery: { initial_delay_ms: 50, max_delay_ms: 100, max_attempts: 1000, circuit_failures: 0 } },
      { status: () => (receiverUp() ? 200 : 503) },
      { postgres_url_env: "DATABASE_URL" },
      { DATABASE_URL: url },
      replicaLeaseMs === undefined ? {} : { replicaLeaseMs },
    );
  const first = await start();
  const second = await start();
  harnesses = [first, second];
  return [first, second];
}

async function accept(harness: ServiceHarness, body: unknown, headers: Record<string, string> = {}): Promise<string> {
  const response = await harness.post(body, headers);
  expect(response.status).toBe(200);
  return ((await response.json()) as { message_id: string }).message_id;
}

describe("two replicas on one Postgres", () => {
  it("hands a stopping replica's conversations to the other at once, not after the lease, in order", async () => {
    let up = false;
    // A lease of 15 s (its sweep every 3 s): the hand-over a stop makes comes within a sweep or
    // two, and a stop that gave nothing up would wait for the whole lease, far from the bound below.
    const [first, second] = await twoReplicas(() => up, LONG_LEASE_MS);
    // Replies fail while the receiver is down: the first replica holds these conversations.
    const accepted: string[] = [];
    for (let index = 0; index < 6; index += 1) {
      accepted.push(await accept(first, { sender_id: `s${index % 2}`, text: `m${index}` }));
    }
    await first.service.stop(0);
    harnesses = [second];
    up = true;
    const stoppedAt = Date.now();
    await waitFor(
      () => {
        const answered = new Set(second.replies.map((reply) => (reply.body as Reply).in_reply_to));
        return accepted.every((id) => answered.has(id)) ? true : undefined;
      },
      LONG_LEASE_MS + 5_000,
      "every message delivered by the second replica",
    );
    // A stop gives its conversations up, so the next sweep takes them, not the lease's end.
    expect(Date.now() - stoppedAt).toBeLessThan(LONG_LEASE_MS - 5_000);
    for (const conversation of ["s0", "s1"]) {
      const bodies = second.replies
        .map((reply) => reply.body as Reply)
        .filter((body) => body.conversation_id === conversation);
      const firstPosts = bodies.filter(
        (body, index) => bodies.findIndex((other) => other.in_reply_to === body.in_reply_to) === index,
      );
      expect(firstPosts.map((body) => body.sequence)).toEqual([1, 2, 3]);
    }
  }, 40_000);

  it("answers a retry with the same Idempotency-Key on the other replica with the first message's id", async () => {
    const [first, second] = await twoReplicas(() => true);
    const id = await accept(first, { sender_id: "alice", text: "once" }, { "idempotency-key": "order-42" });
    const again = await accept(second, { sender_id: "alice", text: "once" }, { "idempotency-key": "order-42" });
    expect(again).toBe(id);
    await waitFor(() => (first.replies.length + second.replies.length >= 1 ? true : undefined), 5_000);
    // A window for a second reply that should not come, from either replica.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(first.replies.length + second.replies.length).toBe(1);
  });

  it("keeps one conversation in order with gapless sequences when its messages alternate between the replicas", async () => {
    const [first, second] = await twoReplicas(() => true);
    const accepted: string[] = [];
    for (let index = 0; index < 20; index += 1) {
      accepted.push(await accept(index % 2 === 0 ? first : second, { sender_id: "bob", text: `m${index}` }));
    }
    const all = () => [...first.replies, ...second.replies].map((reply) => reply.body as Reply);
    await waitFor(() => (all().length >= accepted.length ? true : undefined), 10_000, "every reply");
    const bySequence = [...all()].sort((a, b) => a.sequence - b.sequence);
    expect(bySequence.map((body) => body.in_reply_to)).toEqual(accepted);
    expect(bySequence.map((body) => body.sequence)).toEqual(accepted.map((_, index) => index + 1));
  });

  it("runs nothing twice when a replica's lease runs out while it lives (a partition), and keeps order", async () => {
    let up = false;
    const [first, second] = await twoReplicas(() => up);
    const accepted: string[] = [];
    for (let index = 0; index < 6; index += 1) {
      accepted.push(await accept(first, { sender_id: `p${index % 2}`, text: `m${index}` }));
    }
    // The second replica may take over once it has been connected for a whole lease.
    await new Promise((resolve) => setTimeout(resolve, 5_200));
    // As the database sees a replica cut off from it: its lease is over, and its renewals wait on
    // a lock the test holds until the other one took its conversations over; the first one then
    // finds out and steps back.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const owners = await client.query<{ owner: string }>("SELECT DISTINCT owner FROM webhook_channel.lanes");
      const firstOwner = owners.rows[0]?.owner ?? "";
      await client.query(
        "UPDATE webhook_channel.replicas SET lease_until = now() - interval '1 second' WHERE id = $1",
        [firstOwner],
      );
      await client.query("BEGIN");
      await client.query("SELECT 1 FROM webhook_channel.replicas WHERE id = $1 FOR UPDATE", [firstOwner]);
      await waitFor(
        () =>
          second.logs.some((line) => line.msg === "took over conversations of another replica") ? true : undefined,
        15_000,
        "the second replica taking the conversations over",
      );
      await client.query("COMMIT");
    } finally {
      await client.end();
    }
    await waitFor(
      () => (first.logs.some((line) => line.msg === "replica taking stock after its lease ran out") ? true : undefined),
      15_000,
      "the first replica stepping back",
    );
    // The receiver sees every attempt; from here on it answers 200, so each message is posted once.
    const cut = [first.replies.length, second.replies.length];
    up = true;
    const received = () => [...first.replies.slice(cut[0]), ...second.replies.slice(cut[1])];
    const bodies = () => received().map((reply) => reply.body as Reply);
    await waitFor(
      () => (accepted.every((id) => bodies().some((body) => body.in_reply_to === id)) ? true : undefined),
      10_000,
      "every message delivered",
    );
    // A window for late or duplicate POSTs to land: the checks below are that none is wrong.
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A POST the first replica had on the wire when it was cut off may still land after the
    // other one posted the same reply (docs/deployment.md, "Limits to know"): the same webhook-id
    // and bytes, once from each replica at most. A brain's answer run twice would carry a second
    // webhook-id; a reply posted twice by one replica's runs, a second copy from that replica.
    const byId = new Map<string, string>();
    for (const replies of [first.replies.slice(cut[0]), second.replies.slice(cut[1])]) {
      const ids = replies.map((reply) => String(reply.headers["webhook-id"]));
      expect(new Set(ids).size).toBe(ids.length);
      for (const reply of replies) {
        const id = String(reply.headers["webhook-id"]);
        expect(byId.get(id) ?? reply.raw).toBe(reply.raw);
        byId.set(id, reply.raw);
      }
    }
    const once = [...byId.values()].map((raw) => JSON.parse(raw) as Reply);
    for (const conversation of ["p0", "p1"]) {
      const posted = once.filter((body) => body.conversation_id === conversation);
      expect(posted.map((body) => body.sequence)).toEqual([1, 2, 3]);
    }
  }, 30_000);
});
