/**
 * The Postgres timeline's pages filtered by channel or by status read an index in the page's
 * order and stop at the page's end: Postgres's own plan (`EXPLAIN`) of the statement the store
 * sends, over a timeline of many messages that `ANALYZE` has described to the planner.
 */
import type pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { TimelinePageQuery } from "../../../../src/core/timeline/timeline-store.js";
import { postgresTimelinePage } from "../../../../src/node/state/postgres/postgres-timeline-page.js";
import { createPostgresTimelineStore } from "../../../../src/node/state/postgres/postgres-timeline-store.js";
import { migratedDatabase } from "./fresh-postgres.js";

const MESSAGES = 20_000;
const CHANNELS = 20;
const START = Date.UTC(2026, 10, 27);

let pool: pg.Pool;

beforeAll(async () => {
  ({ pool } = await migratedDatabase());
  // One message a second over 20 channels; 1 in 100 a dead letter, 1 in 50 retrying, the rest delivered.
  await pool.query(
    `INSERT INTO webhook_channel.timeline (message_id, channel, conversation_id, status, accepted_at, updated_at, events)
     SELECT format('m%s', lpad(i::text, 8, '0')), format('channel-%s', i % $2), format('c%s', i % 500),
            CASE WHEN i % 100 = 0 THEN 'dead_letter' WHEN i % 50 = 1 THEN 'retrying' ELSE 'delivered' END,
            $3::bigint + i * 1000, $3::bigint + i * 1000 + 5, ''
     FROM generate_series(1, $1::int) AS i`,
    [MESSAGES, CHANNELS, START],
  );
  await pool.query("ANALYZE webhook_channel.timeline");
});

interface PlanNode {
  readonly "Node Type": string;
  readonly "Index Name"?: string;
  readonly Plans?: readonly PlanNode[];
}

/** Every step of Postgres's plan for the page `query`, as the store would send it. */
async function stepsOf(query: TimelinePageQuery): Promise<PlanNode[]> {
  const { text, values } = postgresTimelinePage(query);
  const { rows } = await pool.query<{ "QUERY PLAN": { Plan: PlanNode }[] }>({
    text: `EXPLAIN (FORMAT JSON) ${text}`,
    values,
  });
  const steps: PlanNode[] = [];
  const walk = (node: PlanNode): void => {
    steps.push(node);
    for (const child of node.Plans ?? []) walk(child);
  };
  const plan = rows[0]?.["QUERY PLAN"][0]?.Plan;
  if (plan === undefined) throw new Error("EXPLAIN returned no plan");
  walk(plan);
  return steps;
}

const BEFORE = { acceptedAt: START + 15_000 * 1000, id: "m00015000" };

describe("the Postgres timeline's pages", () => {
  it.each<[string, Omit<TimelinePageQuery, "limit">, string]>([
    ["channel", { channel: "channel-3" }, "timeline_channel"],
    ["channel and the cursor", { channel: "channel-3", before: BEFORE }, "timeline_channel"],
    ["status", { status: "dead_letter" }, "timeline_status"],
    ["status, since and the cursor", { status: "retrying", since: START, before: BEFORE }, "timeline_status"],
  ])(
    "filtered by %s read their own index in the page's order: no scan of the table, no sort",
    async (_name, filters, index) => {
      const steps = await stepsOf({ ...filters, limit: 50 });
      expect(steps.map((step) => step["Node Type"])).toEqual(["Limit", "Index Scan"]);
      expect(steps[1]?.["Index Name"]).toBe(index);
    },
  );

  it("answer the newest first, page after page, through those indexes", async () => {
    const store = createPostgresTimelineStore(pool);
    const first = await store.page({ channel: "channel-3", limit: 3 });
    expect(first.map((row) => row.id)).toEqual(["m00019983", "m00019963", "m00019943"]);
    const last = first.at(-1);
    if (last === undefined) throw new Error("empty page");
    const next = await store.page({
      channel: "channel-3",
      before: { acceptedAt: last.acceptedAt, id: last.id },
      limit: 2,
    });
    expect(next.map((row) => row.id)).toEqual(["m00019923", "m00019903"]);
    const dead = await store.page({ status: "dead_letter", before: BEFORE, limit: 2 });
    expect(dead.map((row) => [row.id, row.status])).toEqual([
      ["m00014900", "dead_letter"],
      ["m00014800", "dead_letter"],
    ]);
  });
});
