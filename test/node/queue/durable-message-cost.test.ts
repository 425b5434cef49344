/**
 * What one message costs the state database with `state_dir`: SQLite statements executed and
 * transactions committed, counted through the real job queue, the real consumer (echo brain,
 * undici poster) posting to a real receiver, and the real SQLite backend. A commit is what a
 * write costs (WAL frames written, the write lock taken), far more than a statement. When a
 * count changes, this test fails and docs/performance.md must follow. The Workers twin is
 * test/workers/message-cost.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { createNodeConsumer, type NodeConsumer } from "../../../src/node/consumer/node-consumer.js";
import { createJobQueue, type JobQueue } from "../../../src/node/queue/job-queue.js";
import { openSqliteBackend } from "../../../src/node/state/sqlite/sqlite-backend.js";
import type { StateDb } from "../../../src/node/state/sqlite/sqlite-state.js";
import type { StateBackend } from "../../../src/node/state/state-backend.js";
import { configDocument } from "../../support/configs.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { createLogSink } from "../../support/log-sink.js";

/** What the state database did. */
interface Cost {
  /** Statements executed (reads included), transaction control left out. */
  statements: number;
  /** Transactions committed: explicit ones, and writes outside any (each its own). */
  commits: number;
}

type StatementMethod = (this: Database.Statement, ...args: unknown[]) => unknown;

/**
 * Counts what `db` executes by wrapping better-sqlite3's statement methods, which every
 * statement of the connection goes through (its transactions' BEGIN and COMMIT too), and
 * `exec`. Undone by the returned function.
 */
function meter(db: StateDb): { readonly cost: Cost; restore: () => void } {
  const cost: Cost = { statements: 0, commits: 0 };
  const note = (source: string, readonly: boolean): void => {
    if (/^\s*COMMIT\b/i.test(source)) cost.commits += 1;
    else if (/^\s*(BEGIN|SAVEPOINT|RELEASE|ROLLBACK)\b/i.test(source)) return;
    else {
      cost.statements += 1;
      if (!readonly && !db.inTransaction) cost.commits += 1;
    }
  };
  const statementProto = Object.getPrototypeOf(db.prepare("SELECT 1")) as Record<string, StatementMethod>;
  const restores: (() => void)[] = [];
  for (const name of ["run", "get", "all", "iterate"]) {
    const original = statementProto[name];
    if (original === undefined) throw new Error(`better-sqlite3 statements have no ${name}`);
    statementProto[name] = function (this: Database.Statement, ...args: unknown[]) {
      if (this.database === db) note(this.source, this.readonly);
      return original.apply(this, args);
    };
    restores.push(() => {
      statementProto[name] = original;
    });
  }
  const databaseProto = Database.prototype as unknown as Record<string, (this: StateDb, source: string) => StateDb>;
  const exec = databaseProto.exec;
  if (exec === undefined) throw new Error("better-sqlite3 databases have no exec");
  databaseProto.exec = function (this: StateDb, source: string) {
    if (this === db) note(source, false);
    return exec.call(this, source);
  };
  restores.push(() => {
    databaseProto.exec = exec;
  });
  return {
    cost,
    restore: () => {
      for (const restore of restores) restore();
    },
  };
}

interface Harness {
  readonly queue: JobQueue;
  readonly receiver: JsonTestServer;
  readonly cost: Cost;
  close(): Promise<void>;
}

let open: Harness | undefined;

afterEach(async () => {
  await open?.close();
  open = undefined;
});

/**
 * The Node job queue over the real consumer and the SQLite backend of a fresh `state_dir`,
 * posting to a receiver that answers a reply by its text: `retried` 503 the first time,
 * `dead` 400, anything else 200.
 */
async function harness(): Promise<Harness> {
  const attempts = new Map<string, number>();
  const receiver = await startJsonServer((request) => {
    const text = (request.body as { text?: string }).text ?? "";
    const attempt = (attempts.get(text) ?? 0) + 1;
    attempts.set(text, attempt);
    if (text.startsWith("dead")) return { status: 400, body: {} };
    return { status: text.startsWith("retried") && attempt === 1 ? 503 : 200, body: {} };
  });
  const validated = validateConfig(
    configDocument({
      outbound_url: `${receiver.origin}/replies`,
      delivery: { initial_delay_ms: 20, max_delay_ms: 20, circuit_failures: 0 },
    }),
  );
  if (!validated.ok) throw new Error(JSON.stringify(validated.problems));
  const { config } = validated;
  const { logger } = createLogSink("warn");
  const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-cost-"));
  const state: StateBackend = openSqliteBackend(stateDir, logger);
  const db = state.sqlite?.db;
  if (db === undefined) throw new Error("the SQLite backend has no database");
  const built: NodeConsumer = await createNodeConsumer({
    config,
    logger,
    env: () => undefined,
    state,
    random: () => 0.5,
  });
  const queue = createJobQueue({
    capacity: 1_000,
    run: (job, hooks, admission) => built.consumer.run(job, hooks, admission),
    store: state.lanes,
    epoch: state.epoch,
    logger,
  });
  const metered = meter(db);
  return {
    queue,
    receiver,
    cost: metered.cost,
    async close() {
      metered.restore();
      await queue.drain(0);
      await built.close();
      await state.close();
      await receiver.close();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 5_000) throw new Error(`waited 5 s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let sent = 0;
const message = (text: string, conversationId: string): QueuedMessage => {
  sent += 1;
  return {
    id: `m${sent}-${crypto.randomUUID()}`,
    channel: "webhook",
    receivedAt: Date.now(),
    message: { senderId: conversationId, conversationId, text },
  };
};

/**
 * Accepts `texts` (one message each, of conversations `conversations`, in one event-loop
 * turn), waits until the receiver got `posts` more POSTs and the queue is empty, and a few
 * turns for what was committed on the way; returns what the database did meanwhile.
 */
async function measure(h: Harness, texts: readonly string[], conversations: readonly string[], posts: number) {
  const before = { ...h.cost };
  const postsBefore = h.receiver.requests.length;
  await Promise.all(texts.map((text, index) => h.queue.enqueue(message(text, conversations[index] ?? "c"))));
  await until(() => h.receiver.requests.length - postsBefore >= posts && h.queue.size === 0, "the replies");
  for (let index = 0; index < 3; index += 1) await turn();
  return { statements: h.cost.statements - before.statements, commits: h.cost.commits - before.commits };
}

describe("what one message costs the state database on Node (state_dir)", () => {
  it("counts an echo reply, a reply delivered on its second attempt and a dead letter", async () => {
    const h = await harness();
    open = h;
    // One message at a time, each accepted once the one before was answered: a finished
    // job's delete waits for the next commit, so each count holds the delete of the message
    // before, which costs the same as its own.
    const first = await measure(h, ["first"], ["c1"], 1);
    const echo = await measure(h, ["echo"], ["c1"], 1);
    const retried = await measure(h, ["retried"], ["c1"], 2);
    await measure(h, ["dead-1"], ["c1"], 1);
    // After a dead letter, whose job was deleted with its burial: no delete rides along.
    const dead = await measure(h, ["dead-2"], ["c1"], 1);

    expect({ first, echo, retried, dead }).toEqual({
      // Every transaction first reads the file's epoch (SELECT), so that a process another one
      // took over writes nothing. echo: 1 commit: the accepted job (INSERT), with the delete of
      // the job before (DELETE); 1 commit: the brain's reply, stored before it is posted
      // (UPDATE), with the conversation's last sequence number (INSERT … ON CONFLICT).
      echo: { statements: 6, commits: 2 },
      // The first message of a conversation reads its last sequence number once (SELECT) and
      // has no delete before it.
      first: { statements: 6, commits: 2 },
      // As echo, plus 1 commit: the failed attempt's count and error (UPDATE).
      retried: { statements: 8, commits: 3 },
      // As echo without the delete before, plus 1 commit: the dead letter (INSERT) and the
      // job's removal (DELETE).
      dead: { statements: 8, commits: 3 },
    });
  });

  it("commits a burst of twenty messages accepted in one turn in two transactions of three statements each, not one per message", async () => {
    const h = await harness();
    open = h;
    const conversations = Array.from({ length: 20 }, (_, index) => `c${index}`);
    const texts = conversations.map((conversation) => `hello ${conversation}`);
    // Every conversation known, and the burst's deletes waiting, as in steady traffic.
    await measure(h, texts, conversations, 20);
    const burst = await measure(h, texts, conversations, 20);

    // 1 commit: the epoch (SELECT), the 20 accepted jobs (one INSERT … SELECT FROM json_each)
    // and the 20 deletes of the burst before (one DELETE … IN json_each); 1 commit: the epoch,
    // the 20 replies (one UPDATE … FROM json_each) and their conversations' sequence numbers
    // (one INSERT … SELECT FROM json_each). The burst's own deletes wait for the next commit.
    expect(burst).toEqual({ statements: 6, commits: 2 });
  });
});
