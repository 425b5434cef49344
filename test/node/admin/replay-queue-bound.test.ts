import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ReceivedReply } from "../../../src/node/receiver/sample-receiver.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";
import { ADMIN, adminRequest, listDeadLetters, makeDeadLetters } from "./admin-requests.js";

/** What the receiver answers: 400 (the message dies), 503 with Retry-After (it holds its place) or 200. */
type Mode = "refuse" | "hold" | "accept";

const CAPACITY = 3;
let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A service with a small buffer whose receiver answers as `mode.value` says. */
async function start(stateDir: boolean): Promise<{ h: ServiceHarness; mode: { value: Mode } }> {
  const mode: { value: Mode } = { value: "refuse" };
  const extra: Record<string, unknown> = { admin: { token_env: "ADMIN_SECRET" } };
  if (stateDir) extra.state_dir = await mkdtemp(join(tmpdir(), "webhook-channel-replay-"));
  const status = () =>
    mode.value === "refuse" ? 400 : mode.value === "hold" ? { status: 503, headers: { "retry-after": "1" } } : 200;
  harness = await startHarness(
    {
      buffer_capacity: CAPACITY,
      delivery: { max_attempts: 100, initial_delay_ms: 1_000, max_delay_ms: 1_000 },
    },
    { status },
    extra,
    { ADMIN_SECRET: ADMIN },
  );
  return { h: harness, mode };
}

async function depth(h: ServiceHarness): Promise<number> {
  const body = (await (await fetch(`${h.baseUrl}/readyz`)).json()) as { queue: { depth: number } };
  return body.queue.depth;
}

/** Waits until the queue holds `expected` messages (what `/readyz` says). */
async function untilDepth(h: ServiceHarness, expected: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await depth(h)) !== expected) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for a queue depth of ${expected}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Fills all but `room` places of the queue with messages the receiver keeps answering 503. */
async function fillQueue(h: ServiceHarness, room: number): Promise<void> {
  for (let index = 0; index < CAPACITY - room; index += 1) {
    expect((await h.post({ sender_id: "filler", conversation_id: `hold-${index}`, text: "hold" })).status).toBe(200);
  }
  expect(await depth(h)).toBe(CAPACITY - room);
}

function replay(h: ServiceHarness, path: string, body?: unknown): Promise<Response> {
  return adminRequest(h, path, {
    method: "POST",
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
}

function textsOf(replies: readonly ReceivedReply[]): string[] {
  return replies.map((reply) => (reply.body as { text?: string }).text ?? "");
}

describe("admin replay in memory (no state_dir) with a full queue", () => {
  it("re-queues only as many as fit, keeps the rest listed, and answers how many", async () => {
    const { h, mode } = await start(false);
    const ids = await makeDeadLetters(h, ["a", "b", "c"]);
    mode.value = "hold";
    await fillQueue(h, 1);

    const bulk = await replay(h, "/admin/dead-letters/replay");
    expect(bulk.status).toBe(202);
    expect(await bulk.json()).toEqual({ replayed: 1 });
    expect((await listDeadLetters(h)).items.map((item) => item.id)).toEqual(ids.slice(1));
    expect(await depth(h)).toBe(CAPACITY);

    // Once the queue has room again, the letters left behind replay as any other.
    mode.value = "accept";
    await untilDepth(h, 0);
    const rest = await replay(h, "/admin/dead-letters/replay");
    expect(await rest.json()).toEqual({ replayed: 2 });
    await waitFor(() => (textsOf(h.replies).filter((text) => text === "c").length === 2 ? true : undefined));
    expect((await listDeadLetters(h)).items).toEqual([]);
  });

  it("refuses a replay that finds no room with 503 buffer_full and Retry-After, losing nothing", async () => {
    const { h, mode } = await start(false);
    const ids = await makeDeadLetters(h, ["a", "b"]);
    mode.value = "hold";
    await fillQueue(h, 0);

    for (const [path, body] of [
      [`/admin/dead-letters/${ids[0]}/replay`, undefined],
      ["/admin/dead-letters/replay", undefined],
      ["/admin/dead-letters/replay", { ids }],
    ] as const) {
      const refused = await replay(h, path, body);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(await refused.json()).toMatchObject({ code: "buffer_full", status: 503 });
    }
    expect((await listDeadLetters(h)).items.map((item) => item.id)).toEqual(ids);
    expect(await depth(h)).toBe(CAPACITY);
    // Unknown stays unknown, full or not.
    expect((await replay(h, "/admin/dead-letters/no-such-id/replay")).status).toBe(404);
    expect(await (await replay(h, "/admin/dead-letters/replay", { channel: "other" })).json()).toMatchObject({
      code: "channel_not_configured",
    });
  });
});

describe("admin replay with state_dir and a full queue", () => {
  it("stores every replay but puts on the queue only what fits; the rest follow as room frees", async () => {
    const { h, mode } = await start(true);
    await makeDeadLetters(h, ["a", "b", "c"]);
    mode.value = "hold";
    await fillQueue(h, 1);

    const bulk = await replay(h, "/admin/dead-letters/replay");
    expect(bulk.status).toBe(202);
    expect(await bulk.json()).toEqual({ replayed: 3 });
    expect((await listDeadLetters(h)).items).toEqual([]);
    await untilDepth(h, CAPACITY);
    // Two more polls: the two stored replays still wait for room.
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    expect(await depth(h)).toBe(CAPACITY);

    mode.value = "accept";
    const from = h.replies.length;
    await waitFor(
      () => (["a", "b", "c"].every((text) => textsOf(h.replies.slice(from)).includes(text)) ? true : undefined),
      10_000,
      "every replayed reply, accepted",
    );
    await untilDepth(h, 0);
    expect((await listDeadLetters(h)).items).toEqual([]);
  });
});
