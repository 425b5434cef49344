/**
 * A hand-over whose run fails after its messages are stored (a storage write of the run that
 * the platform refused, say) answers the queue all the same: the messages wait in the lane and
 * the run goes on under the alarm. Thrown, the queue handed them over again and again, and after
 * its `max_retries` moved them to its dead-letter queue, whose consumer kept them as letters of
 * messages the lane still answered: a replay would have answered them twice. Inside workerd.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, expect, it, vi } from "vitest";
import type { DurableLaneStore } from "../../src/workers/conversation/durable-lane-store.js";
import { conversation, eventually, forgetConversations, objectsUse, waiting } from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

it("answers a hand-over whose run failed once its message is stored, and the alarm ends the job", async () => {
  const { lines } = captureLogs();
  const { deliveries } = fakeReceiver();
  objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
  const queued = queuedMessage({ conversationId: freshConversation(), text: "through a failed run" });
  const stub = conversation(queued.message.conversationId);
  const handed = await runInDurableObject(stub, async (instance) => {
    const { store } = instance as unknown as { store: DurableLaneStore };
    const finish = store.finish.bind(store);
    let refusals = 1;
    // The run's last write, once the reply is delivered: the platform refuses it once.
    vi.spyOn(store, "finish").mockImplementation((ticket, job) => {
      if (refusals-- > 0) throw new Error("the platform refused a write");
      return finish(ticket, job);
    });
    return await instance.enqueue([queued]);
  });
  expect(handed).toEqual(["queued"]);
  expect(lines).toContainEqual(
    expect.objectContaining({ level: "warn", msg: "the conversation's run failed; it goes on under its alarm" }),
  );
  await eventually(async () => {
    await runDurableObjectAlarm(stub);
    expect(await waiting(stub)).toBe(0);
  });
  // The reply may be posted again (its delivery was not stored): at least once, under one webhook-id.
  expect(new Set(deliveries.map((delivery) => delivery.headers["webhook-id"])).size).toBe(1);
  expect(new Set(deliveries.map((delivery) => delivery.body.text))).toEqual(new Set(["through a failed run"]));
});
