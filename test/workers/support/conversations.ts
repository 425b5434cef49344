import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { vi } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import type { ConversationObject } from "../../../src/workers/conversation/conversation-object.js";
import worker from "../../../src/workers/index.js";
import type { StorageUsage } from "../../../src/workers/metered-sql.js";
import { replaceObjectEnvironment } from "./object-environment.js";
import type { TestEnv } from "./test-env.js";

/** The queue handler's settlement of a batch; `retryMessages` with the delay each asked for. */
export interface Settled {
  readonly explicitAcks: readonly string[];
  readonly retryMessages: readonly { msgId: string; delaySeconds: number | undefined }[];
}

const touched: DurableObjectStub<ConversationObject>[] = [];

/**
 * Makes the conversation objects of this isolate build from `env`, as they do from the
 * Worker's environment when deployed; {@link forgetConversations} undoes it.
 */
export function objectsUse(env: TestEnv): TestEnv {
  replaceObjectEnvironment(env);
  return env;
}

/** The Durable Object of a conversation of the `webhook` channel; cleaned up after the test. */
export function conversation(conversationId: string, channel = "webhook"): DurableObjectStub<ConversationObject> {
  const namespace = poolEnv.CONVERSATIONS;
  const stub = namespace.get(namespace.idFromName(conversationKey(channel, conversationId)));
  touched.push(stub);
  return stub;
}

/**
 * Deletes the storage (and so the alarm) of every conversation a test used, so that no
 * retry it left behind runs in a later test, and gives objects their own environment back.
 */
export async function forgetConversations(): Promise<void> {
  for (const stub of touched.splice(0)) {
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAll();
    });
  }
  replaceObjectEnvironment(undefined);
}

/**
 * Runs the Worker's queue handler on a batch of the inbound queue. getQueueResult() of this
 * pool version records that retry() was called but not its delay, so each message's retry()
 * is wrapped to record `delaySeconds` too.
 */
export async function handOver(env: TestEnv, messages: ServiceBindingQueueMessage<unknown>[]): Promise<Settled> {
  const batch = createMessageBatch("webhook-channel-inbound", messages);
  const delays = new Map<string, number | undefined>();
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    vi.spyOn(message, "retry").mockImplementation((options?: QueueRetryOptions) => {
      delays.set(message.id, options?.delaySeconds);
      retry(options);
    });
  }
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  const result = await getQueueResult(batch, ctx);
  return {
    explicitAcks: result.explicitAcks,
    retryMessages: result.retryMessages.map(({ msgId }) => ({ msgId, delaySeconds: delays.get(msgId) })),
  };
}

/** The object's alarm (epoch ms), or null. */
export function alarmOf(stub: DurableObjectStub<ConversationObject>): Promise<number | null> {
  return runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
}

/** Jobs waiting in the object's lane. */
export function waiting(stub: DurableObjectStub<ConversationObject>): Promise<number> {
  return runInDurableObject(
    stub,
    (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM lane").one().n,
  );
}

/** What the object counted of its billed work. */
export function usageOf(stub: DurableObjectStub<ConversationObject>): Promise<StorageUsage> {
  return runInDurableObject(stub, (instance) => instance.usage);
}

/** Waits for `check` to hold, polling every 10 ms, for up to `timeout` ms. */
export async function eventually(check: () => void | Promise<void>, timeout = 10_000): Promise<void> {
  await vi.waitFor(check, { timeout, interval: 10 });
}
