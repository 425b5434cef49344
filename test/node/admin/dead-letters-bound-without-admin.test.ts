/**
 * Without `admin`, a durable state still keeps every dead letter its job queue buries (the CLI's
 * `dead-letters` reads them): they are bounded per channel by the default, as on Workers, rather
 * than growing for as long as the service runs. The memory mode keeps none.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_MAX_DEAD_LETTERS } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import { MAX_TRIMMED_PER_KEEP } from "../../../src/core/dead-letters/keep-dead-letter.js";
import { newJob } from "../../../src/core/lifecycle/job.js";
import { MemoryTimelineStore } from "../../../src/core/timeline/memory-timeline-store.js";
import { noTimeline } from "../../../src/core/timeline/timeline-recorder.js";
import { createConsoleTally } from "../../../src/node/admin/console-tally.js";
import { createNodeAdmin } from "../../../src/node/admin/node-admin.js";
import { createSqliteDeadLetterStore } from "../../../src/node/state/sqlite/sqlite-dead-letter-store.js";
import { openStateDb, type StateDb } from "../../../src/node/state/sqlite/sqlite-state.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";

const dirs: string[] = [];
const dbs: StateDb[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) db.close();
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function letterOf(id: string, channel: string, diedAt: number): DeadLetter {
  const job = newJob({ id, channel, receivedAt: diedAt, message: { senderId: "u", conversationId: "c", text: "hi" } });
  return { job, error: { code: "delivery_failed", message: "400", retryable: false }, attempts: 1, diedAt };
}

/** A state file of its own for one test. */
async function freshStateDb(): Promise<StateDb> {
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-letters-"));
  dirs.push(dir);
  const db = openStateDb(dir);
  dbs.push(db);
  return db;
}

/** Writes a letter as the job queue's store buries it: `insert.run(id, channel, letter, diedAt)`. */
function letterInsert(db: StateDb) {
  return db.prepare<[string, string, string, number]>(
    "INSERT INTO dead_letters (id, channel, letter, died_at) VALUES (?, ?, ?, ?)",
  );
}

/** The Node admin of a configuration without `admin`, over `store`. */
function adminWithout(lettersStored: boolean, deadLetterStore: () => ReturnType<typeof createSqliteDeadLetterStore>) {
  const validated = validateConfig(configDocument());
  if (!validated.ok) throw new Error(JSON.stringify(validated.problems));
  const sink = createLogSink();
  const admin = createNodeAdmin({
    config: validated.config,
    deadLetterStore,
    lettersStored,
    secret: () => "",
    logger: sink.logger,
    timeline: { store: new MemoryTimelineStore(0), recorder: noTimeline, clock: { now: () => 0 } },
    status: { tally: createConsoleTally(false, () => 0), queues: new Map(), now: () => 0 },
  });
  return { admin, lines: sink.lines };
}

describe("dead letters without admin", () => {
  it("with state_dir, are bounded per channel by the default, the oldest dropped with a warning", async () => {
    const db = await freshStateDb();
    const insert = letterInsert(db);
    // As the job queue's store buries them: every letter written, one channel over its bound.
    db.transaction(() => {
      for (let n = 1; n <= DEFAULT_MAX_DEAD_LETTERS + 2; n += 1) {
        insert.run(`old-${n}`, "webhook", JSON.stringify(letterOf(`old-${n}`, "webhook", n)), n);
      }
      insert.run("other", "sms", JSON.stringify(letterOf("other", "sms", 1)), 1);
    })();
    const newest = letterOf("newest", "webhook", DEFAULT_MAX_DEAD_LETTERS + 3);
    insert.run("newest", "webhook", JSON.stringify(newest), newest.diedAt);
    const { admin, lines } = adminWithout(true, () => createSqliteDeadLetterStore(db));
    expect(admin.deps).toBeUndefined();
    await admin.onDeadLetter(newest);
    const count = db.prepare("SELECT channel, count(*) AS n FROM dead_letters GROUP BY channel ORDER BY channel");
    expect(count.all()).toEqual([
      { channel: "sms", n: 1 },
      { channel: "webhook", n: DEFAULT_MAX_DEAD_LETTERS },
    ]);
    const oldest = db.prepare("SELECT id FROM dead_letters WHERE channel = 'webhook' ORDER BY died_at LIMIT 1");
    expect(oldest.get()).toEqual({ id: "old-4" });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "warn",
        channel: "webhook",
        max_dead_letters: DEFAULT_MAX_DEAD_LETTERS,
        dropped: 3,
      }),
    );
    const plan = db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT id FROM dead_letters WHERE channel = ? ORDER BY died_at DESC, id DESC LIMIT -1 OFFSET ?",
      )
      .all("webhook", 10) as { detail: string }[];
    expect(plan.map((row) => row.detail).join(" ")).toContain("dead_letters_channel");
  });

  it("brings a table that grew past the bound down by at most a thousand letters per letter kept", async () => {
    const db = await freshStateDb();
    const insert = letterInsert(db);
    const excess = MAX_TRIMMED_PER_KEEP + 500;
    db.transaction(() => {
      for (let n = 1; n <= DEFAULT_MAX_DEAD_LETTERS + excess; n += 1) {
        insert.run(`old-${n}`, "webhook", JSON.stringify(letterOf(`old-${n}`, "webhook", n)), n);
      }
    })();
    const { admin } = adminWithout(true, () => createSqliteDeadLetterStore(db));
    const count = () => db.prepare("SELECT count(*) FROM dead_letters").pluck().get();
    await admin.onDeadLetter(letterOf("old-1", "webhook", 1));
    expect(count()).toBe(DEFAULT_MAX_DEAD_LETTERS + excess - MAX_TRIMMED_PER_KEEP);
    await admin.onDeadLetter(letterOf("old-2", "webhook", 2));
    expect(count()).toBe(DEFAULT_MAX_DEAD_LETTERS);
  });

  it("in memory, keeps none: the store is not even built", async () => {
    const { admin } = adminWithout(false, () => {
      throw new Error("the memory mode keeps no dead letters without admin");
    });
    expect(await admin.onDeadLetter(letterOf("m", "webhook", 1))).toBeFalsy();
  });
});
