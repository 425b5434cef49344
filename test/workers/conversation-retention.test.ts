/**
 * The conversation memory's retention in the Durable Object: the history leaves out turns older
 * than `conversation_memory.retention_hours` of the Worker's configuration, and an append deletes
 * them. The object's whole-conversation expiry is tested with the sequencer.
 */
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { ConversationTurn } from "../../src/core/conversation/conversation-store.js";
import { ConversationMemory } from "../../src/workers/conversation/conversation-memory.js";
import { createConversationTables } from "../../src/workers/conversation/conversation-tables.js";
import { MeteredSql } from "../../src/workers/metered-sql.js";
import { conversation, forgetConversations, objectsUse } from "./support/conversations.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

const HOUR = 3_600_000;
const NOW = 10_000 * HOUR;

afterEach(async () => {
  await forgetConversations();
});

const turn = (text: string, at: number): ConversationTurn => ({ role: "user", text, at });
const texts = (turns: readonly ConversationTurn[]) => turns.map((entry) => entry.text);

/** Runs `work` on a fresh conversation object's memory, its retention `hours` by a clock the test moves. */
function withMemory<T>(
  hours: number,
  work: (memory: ConversationMemory, clock: { now: number }, stored: () => string[]) => T,
): Promise<T> {
  return runInDurableObject(conversation(freshConversation()), (_instance, state) => {
    const sql = new MeteredSql(state.storage.sql);
    createConversationTables(sql);
    const clock = { now: NOW };
    const memory = new ConversationMemory(
      sql,
      () => hours,
      () => clock.now,
    );
    const stored = () => sql.all<{ text: string }>("SELECT text FROM turns ORDER BY seq").map((row) => row.text);
    return work(memory, clock, stored);
  });
}

describe("the conversation memory's retention in the Durable Object", () => {
  it("leaves a turn out of the history once it is older than the retention", async () => {
    const seen = await withMemory(2, (memory, clock) => {
      memory.append([turn("first", NOW - HOUR), turn("second", NOW)]);
      const before = texts(memory.history(10));
      clock.now += HOUR + 1;
      const after = texts(memory.history(10));
      const limited = texts(memory.history(1));
      clock.now += HOUR;
      return { before, after, limited, none: memory.history(10) };
    });
    expect(seen).toEqual({ before: ["first", "second"], after: ["second"], limited: ["second"], none: [] });
  });

  it("deletes the turns older than the retention when it appends, and keeps the rest", async () => {
    const seen = await withMemory(2, (memory, clock, stored) => {
      memory.append([turn("one", NOW - HOUR), turn("two", NOW - HOUR / 2), turn("three", NOW)]);
      clock.now += HOUR + HOUR / 2 + 1;
      const kept = stored();
      memory.append([turn("four", clock.now)]);
      return { kept, after: stored() };
    });
    expect(seen).toEqual({ kept: ["one", "two", "three"], after: ["three", "four"] });
  });

  it("deletes every turn when none is within the retention", async () => {
    const left = await withMemory(1, (memory, _clock, stored) => {
      memory.append([turn("stale", NOW - 3 * HOUR), turn("staler", NOW - 2 * HOUR)]);
      return stored();
    });
    expect(left).toEqual([]);
  });

  it("reads the retention from the Worker's configuration", async () => {
    objectsUse(
      testEnv(channelConfig({ top: { conversation_memory: { retention_hours: 1 } } }), { WEBHOOK_SECRET: SECRET }),
    );
    const stub = conversation(freshConversation());
    const now = Date.now();
    await stub.append([turn("two hours ago", now - 2 * HOUR), turn("half an hour ago", now - HOUR / 2)]);
    expect(texts(await stub.history(10))).toEqual(["half an hour ago"]);
    const stored = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec<{ text: string }>("SELECT text FROM turns ORDER BY seq").toArray(),
    );
    expect(stored.map((row) => row.text)).toEqual(["half an hour ago"]);
  });
});
