/**
 * Offered more than it can hold, the service keeps what it accepted and refuses the rest: with its
 * buffer full (its receiver refusing, so nothing finishes), every further message is answered 503
 * `buffer_full` with `Retry-After` (still after the checks that come before it, and never to a
 * repeated `Idempotency-Key` it accepted), and once the receiver is back every
 * accepted message is delivered in order and the service accepts again. In memory, with SQLite,
 * and with Postgres (one replica), the real service in this process.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { ReceivedReply } from "../../../src/node/receiver/sample-receiver.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { expectConversationInOrder, waitForReplies } from "../../support/reply-checks.js";

const CAPACITY = 12;
let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The state each backend starts with: its configuration keys and environment. */
const backends: readonly [string, () => Promise<{ extra: Record<string, unknown>; env: Record<string, string> }>][] = [
  ["memory", async () => ({ extra: {}, env: {} })],
  ["SQLite", async () => ({ extra: { state_dir: await mkdtemp(join(tmpdir(), "webhook-channel-knee-")) }, env: {} })],
  [
    "Postgres",
    async () => ({
      extra: { postgres_url_env: "DATABASE_URL" },
      env: { DATABASE_URL: await createTestDatabase(inject("postgresUrl")) },
    }),
  ],
];

describe.each(backends)("past its capacity (%s)", (_name, state) => {
  it("answers the rest 503 buffer_full with Retry-After, then delivers every accepted message in order and accepts again", async () => {
    const { extra, env } = await state();
    let up = false;
    const taken: ReceivedReply[] = [];
    harness = await startHarness(
      {
        buffer_capacity: CAPACITY,
        delivery: { initial_delay_ms: 20, max_delay_ms: 50, max_attempts: 10_000, circuit_failures: 0 },
      },
      {
        status: (reply) => {
          if (!up) return 503;
          taken.push(reply);
          return 200;
        },
      },
      extra,
      env,
    );
    const h = harness;
    const accepted = new Map<string, string[]>();
    const refused: Response[] = [];
    const first = await h.post({ sender_id: "c0", text: "m-first" }, { "idempotency-key": "first" });
    const firstId = ((await first.json()) as { message_id: string }).message_id;
    accepted.set("c0", [firstId]);
    for (let index = 1; index < CAPACITY * 3; index += 1) {
      const conversation = `c${index % 4}`;
      const response = await h.post({ sender_id: conversation, text: `m${index}` });
      if (response.status === 200) {
        const ids = accepted.get(conversation) ?? [];
        ids.push(((await response.json()) as { message_id: string }).message_id);
        accepted.set(conversation, ids);
      } else refused.push(response);
    }
    expect([...accepted.values()].flat()).toHaveLength(CAPACITY);
    expect(refused).toHaveLength(CAPACITY * 2);
    for (const response of refused) {
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).not.toBeNull();
      expect(((await response.json()) as { code: string }).code).toBe("buffer_full");
    }
    // Full, it still checks in the contract's order, and a key it accepted before keeps its 200.
    for (const [body, headers, code] of [
      ["{not json", {}, "invalid_json"],
      [{ text: "no sender" }, {}, "invalid_message"],
      [{ sender_id: "c1", text: "m" }, { "idempotency-key": "k".repeat(1_000) }, "invalid_message"],
    ] as const) {
      const refusal = await h.post(body, headers);
      expect(refusal.status).toBe(400);
      expect(((await refusal.json()) as { code: string }).code).toBe(code);
    }
    const repeated = await h.post({ sender_id: "c0", text: "m-first" }, { "idempotency-key": "first" });
    expect(repeated.status).toBe(200);
    expect(((await repeated.json()) as { message_id: string }).message_id).toBe(firstId);

    up = true;
    await waitForReplies(taken, [...accepted.values()].flat(), 20_000);
    for (const [conversation, ids] of accepted) expectConversationInOrder(taken, conversation, ids);
    const again = await h.post({ sender_id: "later", text: "after" });
    expect(again.status).toBe(200);
    await again.body?.cancel();
  }, 40_000);
});
