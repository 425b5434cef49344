/**
 * A timeline prune beside timeline writes of the same messages (a size bound reached under load,
 * while the oldest kept messages are still being delivered): neither may fail with a deadlock
 * (40P01). A write that fails so loses its batch's events; a prune that fails so keeps the rows.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { TimelineWrite } from "../../../../src/core/timeline/timeline-store.js";
import { createPostgresTimelineStore } from "../../../../src/node/state/postgres/postgres-timeline-store.js";
import { migratedDatabase } from "./fresh-postgres.js";

const ROWS = 4_000;

const write = (id: string, acceptedAt: number, at: number): TimelineWrite => ({
  id,
  channel: "webhook",
  conversationId: `c-${id.slice(0, 4)}`,
  acceptedAt,
  status: null,
  updatedAt: at,
  events: [{ type: "accepted", at }],
});

const code = (result: PromiseSettledResult<unknown>): string | undefined =>
  result.status === "rejected" ? String((result.reason as { code?: unknown }).code ?? result.reason) : undefined;

const pools: pg.Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
});

describe("the Postgres timeline's prune beside writes of the rows it deletes", () => {
  it("never deadlocks", async () => {
    const { url } = await migratedDatabase();
    // Without the service's statement timeout: on a loaded machine a statement may outlast it,
    // and this test is about the deadlock alone.
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    pools.push(pool);
    const store = createPostgresTimelineStore(pool);
    const failures: string[] = [];
    for (let round = 0; round < 6 && failures.length === 0; round += 1) {
      const ids = Array.from({ length: ROWS }, () => crypto.randomUUID());
      // Accepted in order of arrival (the rows' physical order), which is not their ids' order.
      for (let start = 0; start < ROWS; start += 500) {
        await store.write(
          ids.slice(start, start + 500).map((id, index) => write(id, 1_000 + start + index, 2_000)),
          [],
        );
      }
      const now = Date.now();
      const writes = [0, 1, 2, 3].map((part) =>
        store.write(
          ids.filter((_, index) => index % 4 === part).map((id) => write(id, 1_000, now)),
          [],
        ),
      );
      const prune = store.prune({ before: now, keep: 0, minutesBefore: 0 });
      const settled = await Promise.allSettled([prune, ...writes]);
      settled.forEach((result, index) => {
        const failed = code(result);
        if (failed !== undefined) failures.push(`${index === 0 ? "prune" : "write"}: ${failed}`);
      });
    }
    expect(failures).toEqual([]);
  });
});
