/**
 * What one message costs on Workers, counted through the Worker's real handlers and the real
 * conversation object (the dead-letter store, for a dead letter, and the channel's receiver
 * object, for a failed POST and the success after it): Worker invocations, Queues operations, Durable Object requests, SQLite
 * rows read and written (as the object's cursors report them, plus one row per `setAlarm`,
 * as Cloudflare bills it) and subrequests. docs/workers.md prices a million messages from
 * these numbers; when one changes, this test fails and the table there must follow. The test
 * prices them too, at the prices the page quotes, and holds an echo message under $5 a million
 * and a retried reply and a dead letter under what they cost before issue 31. With `admin` on,
 * the message timeline's shards are counted too: what the timeline adds to each message.
 */
import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ORDER_HOLD_MS } from "../../src/workers/conversation/conversation-lane.js";
import { DEAD_LETTER_STORE_NAME } from "../../src/workers/dead-letters/dead-letter-object.js";
import worker from "../../src/workers/index.js";
import type { StorageUsage } from "../../src/workers/metered-sql.js";
import { shardName, TIMELINE_SHARDS } from "../../src/workers/timeline/timeline-shards.js";
import { conversation, eventually, forgetConversations, objectsUse, usageOf } from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { replaceObjectWaits } from "./support/object-environment.js";
import { delivered } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

afterEach(async () => {
  replaceObjectWaits({});
  await forgetConversations();
  vi.restoreAllMocks();
});

/** The billed and limited things one message took, end to end. */
interface MessageCost {
  /** `fetch` invocations, and queue consumer invocations (a batch of one message here). */
  workerInvocations: number;
  /** Writes, reads and deletes of queue messages (each up to 64 KB). */
  queueOperations: number;
  /** RPC calls to Durable Objects and alarm invocations. */
  objectRequests: number;
  rowsRead: number;
  /** SQL rows written, and one per `setAlarm`. */
  rowsWritten: number;
  /** Outbound requests (brain, receiver) and binding calls (queue sends, Durable Object calls). */
  subrequests: number;
}

/** A namespace whose stubs count every method call in `calls`. */
function counted<T extends Rpc.DurableObjectBranded | undefined>(
  namespace: DurableObjectNamespace<T>,
  calls: string[],
): DurableObjectNamespace<T> {
  return {
    idFromName: (name: string) => namespace.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = namespace.get(id) as unknown as Record<string, (...args: unknown[]) => unknown>;
      // Only method calls go through (RPC stubs answer any property name with a callable).
      return new Proxy(
        {},
        {
          get: (_target, method) =>
            typeof method !== "string" || method === "then"
              ? undefined
              : (...args: unknown[]) => {
                  calls.push(method);
                  return stub[method]?.(...args);
                },
        },
      );
    },
  } as unknown as DurableObjectNamespace<T>;
}

/** The admin API's secret, for a configuration with `admin` (and so the message timeline). */
const ADMIN_SECRET = "workers-admin-secret-abcdefghijklmnopqrstuvwxyz0123";

/** A Worker environment whose Durable Object calls and queue traffic are counted. */
function countedEnv(config: unknown, calls: string[]): TestEnv {
  const base = testEnv(config, { WEBHOOK_SECRET: SECRET, ADMIN_SECRET });
  return {
    ...base,
    CONVERSATIONS: counted(poolEnv.CONVERSATIONS, calls),
    DEAD_LETTER_STORE: counted(poolEnv.DEAD_LETTER_STORE, calls),
    RECEIVERS: counted(poolEnv.RECEIVERS, calls),
    TIMELINE_SHARDS: counted(poolEnv.TIMELINE_SHARDS, calls),
  };
}

/** The message timeline's shards, whose billed work counts too once the timeline is on. */
const shards = () =>
  Array.from({ length: TIMELINE_SHARDS }, (_, index) =>
    poolEnv.TIMELINE_SHARDS.get(poolEnv.TIMELINE_SHARDS.idFromName(shardName("timeline", index))),
  );
async function shardsUsage(): Promise<StorageUsage> {
  const total: StorageUsage = { rowsRead: 0, rowsWritten: 0, alarmsSet: 0, alarmRuns: 0 };
  for (const stub of shards()) {
    const usage = await runInDurableObject(stub, (instance) => instance.usage);
    total.rowsRead += usage.rowsRead;
    total.rowsWritten += usage.rowsWritten;
    total.alarmsSet += usage.alarmsSet;
    total.alarmRuns += usage.alarmRuns;
  }
  return total;
}

/** The one dead-letter store, whose billed work counts too once a message dies. */
const letterStore = () => poolEnv.DEAD_LETTER_STORE.get(poolEnv.DEAD_LETTER_STORE.idFromName(DEAD_LETTER_STORE_NAME));
const storeUsage = () => runInDurableObject(letterStore(), (instance) => instance.usage);

/** The receiver object of the `webhook` channel: a failed POST is reported to it, and so is the success after it. */
const receiverObject = () => poolEnv.RECEIVERS.get(poolEnv.RECEIVERS.idFromName("webhook"));
const receiverUsage = () => runInDurableObject(receiverObject(), (instance) => instance.usage);

/** Runs one queue consumer invocation on `bodies`; returns how many it acked. */
async function consume(env: TestEnv, queue: string, bodies: unknown[]): Promise<number> {
  const batch = createMessageBatch(
    queue,
    bodies.map((body) => delivered(body)),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  return (await getQueueResult(batch, ctx)).explicitAcks.length;
}

/** Nothing of the conversation waits or runs any more, and its alarm is its expiry's. */
const settled = (stub: ReturnType<typeof conversation>) =>
  runInDurableObject(stub, async (_instance, state) => {
    const { n } = state.storage.sql
      .exec<{ n: number }>("SELECT (SELECT COUNT(*) FROM lane) + (SELECT COUNT(*) FROM answered WHERE open = 1) AS n")
      .one();
    const alarm = await state.storage.getAlarm();
    return n === 0 && alarm !== null && alarm > Date.now() + 86_400_000;
  });

const difference = (after: StorageUsage, before: StorageUsage) => ({
  rowsRead: after.rowsRead - before.rowsRead,
  rowsWritten: after.rowsWritten - before.rowsWritten + (after.alarmsSet - before.alarmsSet),
  alarmRuns: after.alarmRuns - before.alarmRuns,
});

/**
 * The receiver of the test: counts the POSTs it gets, and answers each as `next` says, then
 * `otherwise`; while `gate` is set, only once it resolves (a receiver slower than the hand-over).
 */
const receiver = { posts: 0, next: [] as number[], otherwise: 200, gate: undefined as Promise<void> | undefined };

/**
 * Sends one message of `conversationId` through the Worker as a client would, lets the
 * platform's part run (the queue hands it to the consumer; dead letters to theirs), and
 * counts what it took once the receiver got `posts` POSTs and the conversation's lane is empty.
 */
async function measure(
  env: TestEnv,
  calls: string[],
  conversationId: string,
  posts: number,
  slow = false,
): Promise<MessageCost> {
  const stub = conversation(conversationId);
  const before = await usageOf(stub);
  const storeBefore = await storeUsage();
  const receiverBefore = await receiverUsage();
  const shardsBefore = await shardsUsage();
  const callsBefore = calls.length;
  const postsBefore = receiver.posts;
  const response = await worker.fetch(
    new Request("https://channel.example/webhook", {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "u1", conversation_id: conversationId, text: "hello" }),
    }),
    env,
  );
  expect(response.status).toBe(200);
  let invocations = 1;
  const inbound = env.INBOUND.sent.splice(0);
  let release: () => void = () => undefined;
  if (slow) receiver.gate = new Promise<void>((resolve) => (release = resolve));
  // Written by the endpoint, read by the consumer, deleted when acked.
  let operations = inbound.length * 2 + (await consume(env, "webhook-channel-inbound", inbound));
  invocations += 1;
  // The receiver answers once the hand-over returned, so the run goes on under the alarm.
  receiver.gate = undefined;
  release();
  await eventually(() => expect(receiver.posts - postsBefore).toBe(posts));
  await eventually(async () => expect(await settled(stub)).toBe(true));
  const letters = env.DEAD_LETTERS.sent.splice(0);
  if (letters.length > 0) {
    operations += letters.length * 2 + (await consume(env, "webhook-channel-dead-letters", letters));
    invocations += 1;
  }
  const conversationStorage = difference(await usageOf(stub), before);
  const others = [
    difference(await storeUsage(), storeBefore),
    difference(await receiverUsage(), receiverBefore),
    difference(await shardsUsage(), shardsBefore),
  ];
  const storage = others.reduce(
    (sum, usage) => ({
      rowsRead: sum.rowsRead + usage.rowsRead,
      rowsWritten: sum.rowsWritten + usage.rowsWritten,
      alarmRuns: sum.alarmRuns + usage.alarmRuns,
    }),
    conversationStorage,
  );
  const objectCalls = calls.length - callsBefore;
  return {
    workerInvocations: invocations,
    queueOperations: operations,
    objectRequests: objectCalls + storage.alarmRuns,
    rowsRead: storage.rowsRead,
    rowsWritten: storage.rowsWritten,
    subrequests: receiver.posts - postsBefore + inbound.length + letters.length + objectCalls,
  };
}

/** The Workers Paid prices docs/workers.md quotes, in dollars per million of each. */
const PRICE = {
  workerRequest: 0.3,
  cpuMs: 0.02,
  queueOperation: 0.4,
  objectRequest: 0.15,
  gbSecond: 12.5,
  rowRead: 0.001,
  rowWritten: 1,
};

/** A Durable Object's memory as its duration is billed, in GB. */
const OBJECT_GB = 0.128;

/** The hand-over's wait in production (`ConversationObject.HAND_OVER_WAIT_MS`). */
const HAND_OVER_WAIT_MS = 250;

/**
 * Dollars for a million messages that each cost `cost`, with the conversation object busy
 * `busyMs` per message and about 1 ms of CPU per Worker invocation, as the page prices them.
 */
function perMillion(cost: MessageCost, busyMs: number): number {
  return (
    cost.workerInvocations * (PRICE.workerRequest + PRICE.cpuMs) +
    cost.queueOperations * PRICE.queueOperation +
    cost.objectRequests * PRICE.objectRequest +
    (busyMs / 1000) * OBJECT_GB * PRICE.gbSecond +
    cost.rowsRead * PRICE.rowRead +
    cost.rowsWritten * PRICE.rowWritten
  );
}

/** An echo reply delivered first time, as the first test counts it. */
const ECHO_WITHOUT_TIMELINE: MessageCost = {
  workerInvocations: 2,
  queueOperations: 3,
  objectRequests: 1,
  rowsRead: 9,
  rowsWritten: 2,
  subrequests: 3,
};

/** What a retried reply and a dead letter took before issue 31, the deletion of their id a day later included. */
const BEFORE: Record<"retried" | "dead", MessageCost> = {
  retried: {
    workerInvocations: 2,
    queueOperations: 3,
    objectRequests: 4,
    rowsRead: 28,
    rowsWritten: 10,
    subrequests: 6,
  },
  dead: { workerInvocations: 3, queueOperations: 6, objectRequests: 3, rowsRead: 16, rowsWritten: 8, subrequests: 6 },
};

describe("what one message costs on Workers", () => {
  it("counts an echo reply delivered first time, one retry, and a dead letter", async () => {
    const { echo, retried, dead, slow, first } = await measureEach(
      channelConfig({ delivery: { initial_delay_ms: 20 } }),
    );
    expect({ echo: row(echo), retried: row(retried), dead: row(dead), slow: row(slow), first: row(first) }).toEqual({
      // Issue 31: 2 rows written, and none later (the row that keeps its id is taken over by a
      // later id instead of being deleted).
      echo: [2, 3, 1, 9, 2, 3],
      // The failed POST and the success after it are each reported to the receiver object.
      retried: [2, 3, 4, 28, 9, 6],
      dead: [3, 6, 3, 11, 6, 6],
      // A receiver slower than the hand-over's wait: the run goes on under an alarm set to fire
      // at once (a row and a request), and the expiry's alarm is set again after it (a row).
      slow: [2, 3, 2, 15, 4, 3],
      // The first message of a conversation also notes when it was active, and sets the alarm
      // of its expiry.
      first: [2, 3, 1, 14, 5, 3],
    });

    // Priced as docs/workers.md prices them, with a receiver answering within the hand-over's
    // wait (a slow one: 100 ms), and up to the order hold on top.
    const within = HAND_OVER_WAIT_MS + ORDER_HOLD_MS;
    expect(perMillion(echo, within)).toBeLessThan(5);
    // Against the rows these took before issue 31 (the deletion of the id a day later included).
    expect(perMillion(retried, 2 * within)).toBeLessThan(perMillion(BEFORE.retried, 2 * within));
    expect(perMillion(dead, within)).toBeLessThan(perMillion(BEFORE.dead, within));
  });

  it("counts what the message timeline adds (with admin on): two shard requests, and the rows of each write", async () => {
    const config = channelConfig({ delivery: { initial_delay_ms: 20 }, top: { admin: { token_env: "ADMIN_SECRET" } } });
    // Each shard sets the alarm of its prune once per 10 minutes, whatever it takes: set here, so
    // that no message below counts it.
    for (const stub of shards()) await stub.write([], []);
    const { echo, retried, dead, slow, first } = await measureEach(config);
    // Each message: the Worker's write of its acceptance (a request and a subrequest; its row, its
    // index entry and the minute's counts: 3 rows written) and one write per run of its
    // conversation object (the row updated and the minute's counts: 2); each write reads 2 rows.
    expect({ echo: row(echo), retried: row(retried), dead: row(dead), slow: row(slow), first: row(first) }).toEqual({
      echo: [2, 3, 1 + 2, 9 + 4, 2 + 5, 3 + 2],
      // Two runs: the failed POST's, and the delivery's.
      retried: [2, 3, 4 + 3, 28 + 6, 9 + 7, 6 + 3],
      dead: [3, 6, 3 + 2, 11 + 4, 6 + 5, 6 + 2],
      slow: [2, 3, 2 + 2, 15 + 4, 4 + 5, 3 + 2],
      first: [2, 3, 1 + 2, 14 + 4, 5 + 5, 3 + 2],
    });
    // docs/workers.md prices it: $5.30 a million more for an echo reply ($1 more when its row is pruned).
    const within = HAND_OVER_WAIT_MS + ORDER_HOLD_MS;
    expect(perMillion(echo, within) - perMillion(ECHO_WITHOUT_TIMELINE, within)).toBeCloseTo(5.304, 3);
  });
});

/** docs/workers.md, "What a million messages cost", prices these rows. */
const row = (cost: MessageCost) => [
  cost.workerInvocations,
  cost.queueOperations,
  cost.objectRequests,
  cost.rowsRead,
  cost.rowsWritten,
  cost.subrequests,
];

/**
 * Measures, in one fresh conversation under `config`, its first message, then an echo reply, a
 * reply retried once, a dead letter, and a reply slower than the hand-over's wait.
 */
async function measureEach(
  config: unknown,
): Promise<Record<"first" | "echo" | "retried" | "dead" | "slow", MessageCost>> {
  captureLogs();
  fakeReceiver(async () => {
    receiver.posts += 1;
    await receiver.gate;
    return new Response(null, { status: receiver.next.shift() ?? receiver.otherwise });
  });
  const calls: string[] = [];
  const env = objectsUse(countedEnv(config, calls));
  const conversationId = freshConversation();

  // A receiver that answers within the hand-over's wait, however loaded the machine.
  replaceObjectWaits({ handOverMs: 60_000 });
  const first = await measure(env, calls, conversationId, 1);
  const echo = await measure(env, calls, conversationId, 1);
  // The first report of a channel to its receiver object (after the object started) also
  // writes the channel's name: measured once before, so the row counts the usual case.
  receiver.next = [503];
  await measure(env, calls, conversationId, 2);
  receiver.next = [503];
  const retried = await measure(env, calls, conversationId, 2);
  receiver.otherwise = 400;
  const dead = await measure(env, calls, conversationId, 1);
  receiver.otherwise = 200;
  replaceObjectWaits({});
  const slow = await measure(env, calls, conversationId, 1, true);
  return { first, echo, retried, dead, slow };
}
