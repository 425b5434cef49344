/**
 * A write that got no answer (the database stopped answering; a partition TCP later heals) may be
 * committed late, in any order with a later write of the lane: its ticket is spent. Nothing more
 * is sent under it, the replica is told to claim the lane again, and the late write, once
 * delivered, commits or is refused by the new claim's fence, never after a write of that claim.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Job } from "../../../../src/core/lifecycle/job.js";
import { createPostgresLaneStore } from "../../../../src/node/state/postgres/postgres-lane-store.js";
import { createLogSink } from "../../../support/log-sink.js";
import { gateInFront, type TcpGate } from "../../../support/tcp-gate.js";
import { waitFor } from "../../../support/wait-for.js";
import { migratedDatabase, poolOn } from "./fresh-postgres.js";
import { claimTicket, jobIn, laneOf, storedJob, storedLastSequence } from "./lane-tickets.js";

let gate: TcpGate | undefined;

afterEach(async () => {
  gate?.release();
  await gate?.close();
  gate = undefined;
});

const answered = (of: Job, sequence: number): Job => ({
  ...of,
  replies: [{ id: crypto.randomUUID(), sequence, body: "{}" }],
});

describe("a ticket spent by a write of unknown outcome", () => {
  it("sends nothing more under it, has the lane claimed again, and the late write never lands after the new claim's", async () => {
    const { url, pool } = await migratedDatabase();
    const gated = await gateInFront(url);
    gate = gated.gate;
    const store = createPostgresLaneStore(
      poolOn(gated.url, { queryTimeoutMillis: 500 }),
      "rspent",
      createLogSink().logger,
    );
    const spent: string[] = [];
    store.onSpent(({ key }) => spent.push(key));
    const job = jobIn("spent");
    await store.add(job);
    const ticket = await claimTicket(pool, "rspent", job);
    store.primed(ticket, 0);

    gate.hold();
    const first = answered(job, 1);
    const saving = store.save(ticket, first, { turns: [] });
    // Held for the next group while the first is in flight: withdrawn once that one fails.
    await new Promise((resolve) => setImmediate(resolve));
    const following = store.postpone(ticket, { ...job, attempts: 7 }, 0);
    const [saved, followed] = await Promise.allSettled([saving, following]);
    expect(saved).toMatchObject({ status: "rejected", reason: { code: "state_unavailable" } });
    expect(followed).toMatchObject({ status: "rejected", reason: { code: "lane_fenced" } });
    expect(spent).toEqual([laneOf(job)]);
    // The run's next writes under the spent ticket are refused here, without being sent.
    await expect(store.postpone(ticket, { ...job, attempts: 1 }, 0)).rejects.toMatchObject({ code: "lane_fenced" });
    await expect(store.lastSequence(ticket)).rejects.toMatchObject({ code: "lane_fenced" });
    await expect(store.save(ticket, answered(job, 1), { turns: [] })).rejects.toMatchObject({ code: "lane_fenced" });

    // The database answers again: the write given up on reaches it and commits, late.
    gate.release();
    await waitFor(
      async () =>
        (await storedJob(pool, job.message.id))?.replies?.[0]?.id === first.replies?.[0]?.id ? true : undefined,
      5_000,
      "the late write",
    );
    expect((await storedJob(pool, job.message.id))?.attempts).toBe(0);
    // The lane claimed again: the new claim reads what the late write left, and writes on from it.
    const again = await claimTicket(pool, "rspent", job);
    expect(again.epoch).toBeGreaterThan(ticket.epoch);
    expect(await store.lastSequence(again)).toBe(1);
    await store.save(again, { ...first, delivered: 1 });
    expect((await storedJob(pool, job.message.id))?.delivered).toBe(1);
    expect(await storedLastSequence(pool, laneOf(job))).toBe(1);
  });
});
