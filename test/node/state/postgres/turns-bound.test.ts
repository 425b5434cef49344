/**
 * Postgres keeps at most 100 turns per conversation, as memory, SQLite and the Durable Objects
 * do, also when one answer brings more: a bot answering one message with 150 replies, through
 * the service's lane store, and 150 turns appended at once through the conversation store.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createPostgresConversationStore } from "../../../../src/node/state/postgres/postgres-conversation-store.js";
import { type JsonTestServer, startJsonServer } from "../../../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../../../support/node-service.js";
import { waitFor } from "../../../support/wait-for.js";
import { migratedDatabase } from "./fresh-postgres.js";

const MANY = 150;
let harness: ServiceHarness | undefined;
let bot: JsonTestServer | undefined;

afterEach(async () => {
  await harness?.close();
  await bot?.close();
  harness = undefined;
  bot = undefined;
});

describe("turns kept per conversation on Postgres", () => {
  it("keeps the newest 100 when one answer brings more replies", async () => {
    const { url, pool } = await migratedDatabase();
    const answer = { replies: Array.from({ length: MANY }, (_, index) => ({ text: `r${index}` })) };
    bot = await startJsonServer(() => ({ status: 200, body: answer }));
    const running = await startHarness(
      {},
      {},
      {
        postgres_url_env: "DATABASE_URL",
        routes: [{ channel: "webhook", brain: "bot" }],
        brains: { bot: { type: "http", url: `${bot.origin}/bot`, max_history: 100 } },
      },
      { DATABASE_URL: url },
    );
    harness = running;
    expect((await running.post({ sender_id: "alice", text: "many" })).status).toBe(200);
    await waitFor(() => (running.replies.length >= MANY ? true : undefined), 20_000, "every reply");
    await running.close();
    harness = undefined;
    const { rows } = await pool.query<{ n: number; last: string }>(
      "SELECT count(*)::int AS n, max(turn) FILTER (WHERE seq = (SELECT max(seq) FROM webhook_channel.turns)) AS last FROM webhook_channel.turns",
    );
    expect(rows[0]?.n).toBe(100);
    expect(JSON.parse(rows[0]?.last ?? "{}")).toMatchObject({ text: `r${MANY - 1}` });
  }, 60_000);

  it("keeps the newest 100 of one append of more", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresConversationStore(pool);
    const turns = Array.from({ length: MANY }, (_, index) => ({
      role: "user" as const,
      text: `t${index}`,
      at: Date.now(),
    }));
    await store.append("c1", turns);
    const kept = await store.history("c1", 1_000);
    expect(kept).toHaveLength(100);
    expect(kept.at(-1)?.text).toBe(`t${MANY - 1}`);
    expect(kept[0]?.text).toBe(`t${MANY - 100}`);
  });
});
