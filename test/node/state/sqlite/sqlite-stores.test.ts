import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { conversationKey } from "../../../../src/core/conversation/conversation-store.js";
import { createSqliteConversationStore } from "../../../../src/node/state/sqlite/sqlite-conversation-store.js";
import { createSqliteIdempotencyStore } from "../../../../src/node/state/sqlite/sqlite-idempotency-store.js";
import { openStateDb } from "../../../../src/node/state/sqlite/sqlite-state.js";
import { openSqliteLanes } from "../../../support/sqlite-lanes.js";

const newStateDir = () => mkdtemp(join(tmpdir(), "webhook-channel-sqlite-"));
// Timed from now: a turn older than the conversation memory's retention is not read back.
const NOW = Date.now();
const turn = (text: string, offset: number) => ({ role: "user" as const, text, at: NOW + offset });

describe("SQLite state", () => {
  it("keeps conversation memory across a reopen, bounded per conversation", async () => {
    const stateDir = await newStateDir();
    const first = openStateDb(stateDir);
    const store = createSqliteConversationStore(first, 3);
    await store.append("c1", [turn("one", 1), turn("two", 2)]);
    await store.append("c1", [turn("three", 3), turn("four", 4)]);
    await store.append("c2", [turn("other", 5)]);
    first.close();

    const reopened = createSqliteConversationStore(openStateDb(stateDir), 3);
    expect((await reopened.history("c1", 10)).map((entry) => entry.text)).toEqual(["two", "three", "four"]);
    expect((await reopened.history("c1", 2)).map((entry) => entry.text)).toEqual(["three", "four"]);
    expect((await reopened.history("c2", 10)).map((entry) => entry.text)).toEqual(["other"]);
    expect(await reopened.history("c1", 0)).toEqual([]);
  });

  it("continues reply sequences across a reopen from the numbers stored with replies, and only from those", async () => {
    const stateDir = await newStateDir();
    const first = openStateDb(stateDir);
    const lanes = openSqliteLanes(first);
    const c1 = { key: conversationKey("webhook", "c1"), epoch: lanes.epoch };
    const job = {
      message: { id: "m1", channel: "webhook", receivedAt: 1_000, message: { senderId: "a", conversationId: "c1" } },
      delivered: 0,
      attempts: 0,
    };
    await lanes.add(job);
    expect(await lanes.lastSequence(c1)).toBe(0);
    const replies = [
      { id: "r1", sequence: 1, body: "{}" },
      { id: "r2", sequence: 2, body: "{}" },
    ];
    await lanes.save(c1, { ...job, replies }, { turns: [] });
    // Progress without new replies moves nothing.
    await lanes.save(c1, { ...job, replies, delivered: 1 });
    expect(await lanes.lastSequence(c1)).toBe(2);
    first.close();

    const reopened = openSqliteLanes(openStateDb(stateDir));
    expect(await reopened.lastSequence({ key: c1.key, epoch: reopened.epoch })).toBe(2);
    expect(await reopened.lastSequence({ key: conversationKey("webhook", "c2"), epoch: reopened.epoch })).toBe(0);
  });

  it("remembers an Idempotency-Key committed with its message across a reopen", async () => {
    const stateDir = await newStateDir();
    const db = openStateDb(stateDir);
    const jobs = openSqliteLanes(db);
    const store = createSqliteIdempotencyStore(db);
    const record = { messageId: "m1", conversationId: "a" };
    expect(await store.reserve("webhook", "k", record, 1_000)).toBeUndefined();
    expect(await store.reserve("webhook", "k", { messageId: "m2", conversationId: "a" }, 1_001)).toEqual({
      record,
      committed: false,
    });
    await jobs.add({
      message: {
        id: "m1",
        channel: "webhook",
        receivedAt: 1_000,
        idempotencyKey: "k",
        message: { senderId: "a", conversationId: "a", text: "x" },
      },
      delivered: 0,
      attempts: 0,
    });
    await store.commit("webhook", "k", "m1", 1_002);
    db.close();

    const reopened = createSqliteIdempotencyStore(openStateDb(stateDir));
    expect(await reopened.reserve("webhook", "k", { messageId: "m3", conversationId: "a" }, 2_000)).toEqual({
      record,
      committed: true,
    });
    expect(
      await reopened.reserve("webhook", "k", { messageId: "m4", conversationId: "a" }, 1_000 + 86_400_001),
    ).toBeUndefined();
  });
});
