import { describe, expect, it } from "vitest";
import { createAdminDeadLetters } from "../../../src/core/dead-letters/create-admin-dead-letters.js";
import { createMemoryDeadLetterStore } from "../../../src/core/dead-letters/memory-dead-letter-store.js";
import { MemoryTimelineStore } from "../../../src/core/timeline/memory-timeline-store.js";
import { createTimelineAdmin } from "../../../src/core/timeline/timeline-admin.js";
import type { TimelineWrite } from "../../../src/core/timeline/timeline-store.js";
import { createTestApp } from "../../support/test-app.js";

const ADMIN_SECRET = "timeline-admin-secret-0123456789";
const T0 = Date.UTC(2026, 10, 27, 4, 0, 0);

function appWith(store: MemoryTimelineStore | undefined) {
  return createTestApp({
    admin: {
      secret: () => ADMIN_SECRET,
      deadLetters: createAdminDeadLetters(createMemoryDeadLetterStore(() => true)),
      status: { report: () => Promise.reject(new Error("not asked")) },
      timeline: store === undefined ? undefined : createTimelineAdmin(store, { now: () => T0 + 90_000 }),
    },
  });
}

function accepted(id: string, at: number, conversationId = "conv"): TimelineWrite {
  return {
    id,
    channel: "webhook",
    conversationId,
    acceptedAt: at,
    status: "accepted",
    updatedAt: at,
    events: [{ type: "accepted", at }],
  };
}

async function get(app: ReturnType<typeof appWith>, path: string, init: RequestInit = {}) {
  return await app.request(path, { ...init, headers: { authorization: `Bearer ${ADMIN_SECRET}` } });
}

describe("the timeline's admin routes", () => {
  it("asks for the admin secret before saying anything about a message", async () => {
    const response = await appWith(new MemoryTimelineStore()).request("/admin/messages/m1");
    expect(response.status).toBe(401);
  });

  it("shows a message's events with ISO times, and 404 with a problem for one it never saw", async () => {
    const store = new MemoryTimelineStore();
    store.write(
      [
        {
          ...accepted("m1", T0),
          events: [
            { type: "accepted", at: T0 },
            { type: "retry", at: T0 + 10, next_attempt_at: T0 + 1010, error_code: "delivery_failed", error: "503" },
          ],
          status: "retrying",
          updatedAt: T0 + 10,
        },
      ],
      [],
    );
    const app = appWith(store);
    const response = await get(app, "/admin/messages/m1");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      message_id: "m1",
      channel: "webhook",
      conversation_id: "conv",
      status: "retrying",
      accepted_at: "2026-11-27T04:00:00.000Z",
      updated_at: "2026-11-27T04:00:00.010Z",
      waiting: { reason: "retry", until: "2026-11-27T04:00:01.010Z" },
      events: [
        { type: "accepted", at: "2026-11-27T04:00:00.000Z" },
        {
          type: "retry",
          at: "2026-11-27T04:00:00.010Z",
          next_attempt_at: "2026-11-27T04:00:01.010Z",
          error_code: "delivery_failed",
          error: "503",
        },
      ],
    });
    const missing = await get(app, "/admin/messages/nope");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
    expect(((await missing.json()) as { detail: string }).detail).toContain("older than the timeline keeps");
  });

  it("pages the list newest first with a cursor that skips and repeats nothing", async () => {
    const store = new MemoryTimelineStore();
    store.write(
      Array.from({ length: 5 }, (_, index) => accepted(`m${index}`, T0 + index)),
      [],
    );
    const app = appWith(store);
    const seen: string[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const response = await get(app, `/admin/messages?limit=2${cursor === "" ? "" : `&cursor=${cursor}`}`);
      const page = (await response.json()) as { items: { message_id: string }[]; next_cursor: string | null };
      seen.push(...page.items.map((item) => item.message_id));
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(["m4", "m3", "m2", "m1", "m0"]);
    const since = await get(app, `/admin/messages?since=${new Date(T0 + 3).toISOString()}`);
    expect(((await since.json()) as { items: unknown[] }).items).toHaveLength(2);
  });

  it.each([
    ["status=lost", "status"],
    ["since=yesterday", "since"],
    ["limit=0", "limit"],
    ["cursor=not-ours!", "cursor"],
  ])("refuses %s with a 400 naming the parameter", async (query, field) => {
    const response = await get(appWith(new MemoryTimelineStore()), `/admin/messages?${query}`);
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { errors: { field: string }[] };
    expect(problem.errors[0]?.field).toBe(field);
  });

  it("says the timeline is off when it is", async () => {
    const response = await get(appWith(undefined), "/admin/messages/m1");
    expect(response.status).toBe(404);
    expect(((await response.json()) as { detail: string }).detail).toContain("timeline is off");
  });

  it("answers 405 with Allow for a method the paths do not take", async () => {
    const response = await get(appWith(new MemoryTimelineStore()), "/admin/messages/m1", { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });

  it("draws the last hour a minute at a time, with percentiles from the latency counts", async () => {
    const store = new MemoryTimelineStore();
    const minute = T0 + 60_000;
    store.write(
      [],
      [
        { minute, series: "accepted", count: 4 },
        { minute, series: "delivered", count: 4 },
        { minute, series: "latency:20", count: 3 },
        { minute, series: "latency:30", count: 1 },
      ],
    );
    const response = await get(appWith(store), "/admin/activity");
    const body = (await response.json()) as { bucket_seconds: number; buckets: Record<string, unknown>[] };
    expect(body.bucket_seconds).toBe(60);
    expect(body.buckets).toHaveLength(60);
    const last = body.buckets.at(-1);
    expect(last).toMatchObject({ start: new Date(minute).toISOString(), accepted: 4, delivered: 4, retrying: 0 });
    // 1.25^19.5 and 1.25^29.5: the geometric middles of the buckets.
    expect(last?.p50_ms).toBe(Math.round(1.25 ** 19.5));
    expect(last?.p99_ms).toBe(Math.round(1.25 ** 29.5));
    expect(body.buckets[0]).toMatchObject({ accepted: 0, p50_ms: null });
  });
});
