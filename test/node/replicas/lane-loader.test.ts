/**
 * A job read by id (a notice of one whose commit came after a later one's, a job the stocktake
 * found missing) is handed to the queue at the end of its lane; a lane that is to be read from its
 * start anyway (read again after a run of an earlier claim, or waiting for room) is not handed
 * jobs by id, which would overtake those stored before them: it is read from its start instead.
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/core/log/logger.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createLaneLoader } from "../../../src/node/replicas/lane-loader.js";
import { createPostgresLaneStore } from "../../../src/node/state/postgres/postgres-lane-store.js";
import { migratedDatabase } from "../state/postgres/fresh-postgres.js";
import { jobIn } from "../state/postgres/lane-tickets.js";

describe("a lane's jobs read by id", () => {
  it("are handed to the queue, unless the lane is to be read from its start", async () => {
    const { pool } = await migratedDatabase();
    const store = createPostgresLaneStore(pool, "rbyid", silentLogger);
    const queue = createJobQueue({
      capacity: 10,
      logger: silentLogger,
      run: () => new Promise(() => undefined),
    });
    const loader = createLaneLoader(pool, () => new Map([["webhook", queue]]), silentLogger);
    const [late, later] = [jobIn("by-id"), jobIn("by-id")];
    await Promise.all([store.add(late), store.add(later)]);

    const reading = { epoch: 1, upTo: 7, behind: true };
    expect(await loader.byId("webhook", reading, [late.message.id])).toBe(0);
    expect(reading).toEqual({ epoch: 1, upTo: 0, behind: true });
    expect(queue.size).toBe(0);

    const held = { epoch: 1, upTo: 7, behind: false };
    expect(await loader.byId("webhook", held, [later.message.id])).toBe(1);
    expect(queue.knows(later.message.id)).toBe(true);
    await queue.drain(0);
  });
});
