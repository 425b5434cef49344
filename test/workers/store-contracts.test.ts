/**
 * The store contracts, held against the Durable Object implementations inside workerd, over
 * the pool's real namespaces. Every test uses fresh keys, so objects are never shared; the
 * dead-letter store is one object, so its suite uses channels of its own.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, vi } from "vitest";
import { conversationKey } from "../../src/core/conversation/conversation-store.js";
import type { DeadLetter } from "../../src/core/dead-letters/dead-letter.js";
import type { Job } from "../../src/core/lifecycle/job.js";
import type { LaneStore } from "../../src/core/lifecycle/lane-store.js";
import type { ConversationLane } from "../../src/workers/conversation/conversation-lane.js";
import type { ConversationObject } from "../../src/workers/conversation/conversation-object.js";
import { createDurableConversationStore } from "../../src/workers/conversation/durable-conversation-store.js";
import type { DurableLaneStore } from "../../src/workers/conversation/durable-lane-store.js";
import { createDurablePendingJobStore } from "../../src/workers/conversation/durable-pending-job-store.js";
import { DEAD_LETTER_STORE_NAME } from "../../src/workers/dead-letters/dead-letter-object.js";
import { createDurableDeadLetterStore } from "../../src/workers/dead-letters/durable-dead-letter-store.js";
import { createDurableIdempotencyStore } from "../../src/workers/idempotency/durable-idempotency-store.js";
import { conversationStoreContract } from "../shared/store-contracts/conversation-store-contract.js";
import {
  type DeadLetterStoreUnderTest,
  deadLetterStoreContract,
} from "../shared/store-contracts/dead-letter-store-contract.js";
import { idempotencyStoreContract } from "../shared/store-contracts/idempotency-store-contract.js";
import { type LaneStoreHarness, laneStoreContract } from "../shared/store-contracts/lane-store-contract.js";
import { pendingJobStoreContract } from "../shared/store-contracts/pending-job-store-contract.js";
import { forgetConversations, objectsUse } from "./support/conversations.js";
import { captureLogs } from "./support/fake-receiver.js";
import { channelConfig, SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

conversationStoreContract("Durable Object", () => createDurableConversationStore(env.CONVERSATIONS));
laneStoreContract("Durable Object", () => Promise.resolve(objectLanes()), { keepsJobs: true });
idempotencyStoreContract("Durable Object", () => ({ store: createDurableIdempotencyStore(env.IDEMPOTENCY) }));
pendingJobStoreContract("Durable Object", () => createDurablePendingJobStore(env.CONVERSATIONS, env.DEAD_LETTER_STORE));
deadLetterStoreContract("Durable Object", () => durableDeadLetters());

/**
 * The lane store of each conversation object, reached inside the object (`runInDurableObject`):
 * every call goes to the object of its lane, as the object's own runner makes it.
 */
function objectLanes(): LaneStoreHarness {
  const inObject = <T>(key: string, work: (store: DurableLaneStore, object: ConversationObject) => T | Promise<T>) =>
    runInDurableObject(env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(key)), (object: ConversationObject) =>
      work((object as unknown as { readonly store: DurableLaneStore }).store, object),
    );
  const keyOf = (job: Job): string => conversationKey(job.message.channel, job.message.message.conversationId);
  const store: LaneStore = {
    add: (job) => inObject(keyOf(job), (lanes) => lanes.add(job)),
    lastSequence: (ticket) => inObject(ticket.key, (lanes) => lanes.lastSequence(ticket)),
    save: (ticket, job, answered) => inObject(ticket.key, (lanes) => lanes.save(ticket, job, answered)),
    finish: (ticket, job) => inObject(ticket.key, (lanes) => lanes.finish(ticket, job)),
    postpone: (ticket, job, dueAt) => inObject(ticket.key, (lanes) => lanes.postpone(ticket, job, dueAt)),
    hold: (ticket, job, until) => inObject(ticket.key, (lanes) => lanes.hold(ticket, job, until)),
    bury: (ticket, letter) => inObject(ticket.key, (lanes) => lanes.bury(ticket, letter)),
    restore: (job) => inObject(keyOf(job), (lanes) => lanes.restore(job)),
    takeReplayed: () => [],
  };
  return {
    store,
    ticket: (key) => inObject(key, (lanes) => ({ key, epoch: lanes.epoch })),
    claimElsewhere: (key) => inObject(key, (lanes) => void lanes.takeOver()),
    lastSequenceElsewhere: (key) => inObject(key, (lanes) => lanes.lastSequence({ key, epoch: lanes.epoch })),
    turns: (key) => inObject(key, (_lanes, object) => object.history(100)),
    jobs: (key) =>
      inObject(key, (_lanes, object) => (object as unknown as { readonly lane: ConversationLane }).lane.waiting()),
    replays: "lane",
  };
}

const letterStore = () => env.DEAD_LETTER_STORE.get(env.DEAD_LETTER_STORE.idFromName(DEAD_LETTER_STORE_NAME));

afterEach(async () => {
  // No replay a test asked for is handed back after it (its letters' channels exist nowhere).
  await runInDurableObject(letterStore(), (_instance, state) => {
    state.storage.sql.exec("DELETE FROM dead_letters WHERE replay_at IS NOT NULL");
  });
  await forgetConversations();
  vi.restoreAllMocks();
});

/**
 * The dead-letter object through the Worker's store, its logs captured. Its objects build from
 * an environment whose conversations cannot be reached, so that a replay's hand-back never runs
 * a job of a channel no configuration has (the hand-back itself is tested in
 * dead-letter-store.test.ts); `keepLogged` keeps a letter as the dead-letter queue's consumer
 * does, within `admin.max_dead_letters` of the configuration.
 */
function durableDeadLetters(): DeadLetterStoreUnderTest {
  captureLogs();
  objectsUse(objectEnv(1_000));
  return {
    store: createDurableDeadLetterStore(env.DEAD_LETTER_STORE),
    async keepLogged(letter: DeadLetter, max: number) {
      objectsUse(objectEnv(max));
      const { lines } = captureLogs();
      await letterStore().keep(letter);
      return lines;
    },
  };
}

function objectEnv(maxDeadLetters: number): TestEnv {
  const config = channelConfig({
    top: { admin: { token_env: "ADMIN_SECRET", max_dead_letters: maxDeadLetters } },
  });
  const unreachable = {
    idFromName: (name: string) => env.CONVERSATIONS.idFromName(name),
    get: () => ({ replay: () => Promise.reject(new Error("object unreachable")) }),
  } as unknown as DurableObjectNamespace<ConversationObject>;
  const variables = { WEBHOOK_SECRET: SECRET, ADMIN_SECRET: "workers-admin-secret-abcdefghijklmnopqrstuvwxyz0123" };
  return { ...testEnv(config, variables), CONVERSATIONS: unreachable };
}
