/**
 * A conversation's reply `sequence` costs no write of its own: the numbers live in the saved
 * replies and the answered rows, and the counter reads them. These check that numbering still
 * never goes back: across a restart of the object, and once the answered rows are old enough to
 * be taken over by new ids.
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { conversationKey } from "../../src/core/conversation/conversation-store.js";
import type { Job } from "../../src/core/lifecycle/job.js";
import { ANSWERED_KEPT_MS, AnsweredIds } from "../../src/workers/conversation/answered-ids.js";
import { ConversationLane } from "../../src/workers/conversation/conversation-lane.js";
import { ParkedJobs } from "../../src/workers/conversation/parked-jobs.js";
import { MeteredSql } from "../../src/workers/metered-sql.js";
import { eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

describe("reply sequence numbers inside workerd", () => {
  it("keeps counting after the object restarts and after its answered ids' rows are taken over", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const conversationId = freshConversation();
    // A stub does not outlive an abort: a new one each time (and not the helper's, which
    // cleans up with the stubs it handed out).
    const stub = () => env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(conversationKey("webhook", conversationId)));
    const send = async (text: string) => {
      await handOver(env, [delivered(queuedMessage({ conversationId, text }))]);
    };

    await send("one");
    await send("two");
    await eventually(() => expect(deliveries).toHaveLength(2));
    // The instance and the numbers it counted in memory are gone; the answered rows are not.
    await abortAllDurableObjects();
    await send("three");
    await eventually(() => expect(deliveries).toHaveLength(3));

    // A day later their rows are old: the next id takes one over (deleting it would be a billed
    // write), its number is the next all the same, and no row is added.
    const answeredRows = () =>
      runInDurableObject(
        stub(),
        (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM answered").one().n,
      );
    expect(await answeredRows()).toBe(3);
    await runInDurableObject(stub(), (_instance, state) => {
      state.storage.sql.exec("UPDATE answered SET at = at - ?", ANSWERED_KEPT_MS + 1);
    });
    await abortAllDurableObjects();
    await send("four");
    await eventually(() => expect(deliveries).toHaveLength(4));
    expect(await answeredRows()).toBe(3);

    await runInDurableObject(stub(), (_instance, state) => state.storage.deleteAll());
    expect(deliveries.map((delivery) => [delivery.body.text, delivery.body.sequence])).toEqual([
      ["one", 1],
      ["two", 2],
      ["three", 3],
      ["four", 4],
    ]);
  });

  it("keeps the last number when a replayed dead letter's id had taken over the row that held it", async () => {
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const conversationId = freshConversation();
    const stub = env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(conversationKey("webhook", conversationId)));
    const last = await runInDurableObject(stub, (_instance, state) => {
      const sql = new MeteredSql(state.storage.sql);
      const lane = new ConversationLane(sql, new ParkedJobs(sql), new AnsweredIds(sql));
      // A message answered with number 5, a day ago; then one that died with no replies takes
      // its row over (its id and when), keeping the 5.
      state.storage.sql.exec(
        "INSERT INTO answered (id, at, last_seq, job, open) VALUES ('answered', ?, 5, NULL, NULL)",
        Date.now() - ANSWERED_KEPT_MS - 1,
      );
      new AnsweredIds(sql).record("died", null);
      const job: Job = {
        message: { ...queuedMessage({ conversationId, text: "replayed" }), id: "died" },
        delivered: 0,
        attempts: 0,
      };
      lane.restore(job, Date.now(), Date.now());
      return lane.lastSequence();
    });
    expect(last).toBe(5);
  });

  it("gives an object of an earlier version, whose answered ids have no sequence, the column and carries on counting", async () => {
    captureLogs();
    const { deliveries } = fakeReceiver();
    const env = objectsUse(testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }));
    const conversationId = freshConversation();
    const stub = () => env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(conversationKey("webhook", conversationId)));
    // As 0.1 left it: `answered` without `last_seq` (or `job`), the counter in `counters`.
    await runInDurableObject(stub(), (_instance, state) => {
      state.storage.sql.exec("DROP TABLE answered");
      state.storage.sql.exec("CREATE TABLE answered (id TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID");
      state.storage.sql.exec("INSERT INTO answered (id, at) VALUES ('old', ?)", Date.now());
      state.storage.sql.exec("INSERT INTO counters (name, value) VALUES ('sequence', 7)");
    });
    await abortAllDurableObjects();
    await handOver(env, [delivered(queuedMessage({ conversationId, text: "after the upgrade" }))]);
    await eventually(() => expect(deliveries).toHaveLength(1));
    expect(deliveries[0]?.body.sequence).toBe(8);
    const columns = await runInDurableObject(stub(), (_instance, state) =>
      state.storage.sql
        .exec<{ name: string }>("SELECT name FROM pragma_table_info('answered')")
        .toArray()
        .map((column) => column.name),
    );
    expect(columns).toEqual(expect.arrayContaining(["last_seq", "job"]));
    await runInDurableObject(stub(), (_instance, state) => state.storage.deleteAll());
  });
});
