/**
 * Counts what one message costs on Workers through the Worker's real handlers and the real
 * conversation object (the dead-letter store, for a dead letter, and the channel's receiver
 * object, for a failed POST and the success after it): Worker invocations, Queues operations,
 * Durable Object requests, SQLite rows read and written (as the objects' cursors report them,
 * plus one row per `setAlarm`, as Cloudflare bills it) and subrequests. The message timeline's
 * shards are counted too: they do billed work once `admin` is on.
 */
import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { expect } from "vitest";
import { DEAD_LETTER_STORE_NAME } from "../../../src/workers/dead-letters/dead-letter-object.js";
import worker from "../../../src/workers/index.js";
import type { StorageUsage } from "../../../src/workers/metered-sql.js";
import { shardName, TIMELINE_SHARDS } from "../../../src/workers/timeline/timeline-shards.js";
import { conversation, eventually, objectsUse, usageOf } from "./conversations.js";
import { captureLogs, fakeReceiver } from "./fake-receiver.js";
import type { MessageCost } from "./message-cost-pricing.js";
import { replaceObjectWaits } from "./object-environment.js";
import { delivered } from "./queue-messages.js";
import { freshConversation, SECRET } from "./test-config.js";
import { type TestEnv, testEnv } from "./test-env.js";

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
export const shards = () =>
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

/**
 * Measures, in one fresh conversation under `config`, its first message, then an echo reply, a
 * reply retried once, a dead letter, and a reply slower than the hand-over's wait.
 */
export async function measureEach(
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
  // An isolate's first answer of a channel is told to the receiver object (once per isolate, not
  // per message): a message of another conversation takes it, so the rows count the usual case.
  await measure(env, calls, freshConversation(), 1);
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
