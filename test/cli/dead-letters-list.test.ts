import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deadLetterItem, formatDeadLetterTable } from "../../src/cli/dead-letters-table.js";
import type { DeadLetter } from "../../src/core/dead-letters/dead-letter.js";
import { openStateDb } from "../../src/node/state/sqlite/sqlite-state.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";
import { buryIn, openSqliteLanes } from "../support/sqlite-lanes.js";

const FAILED_AT = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

/** A message whose brain call died: no replies yet. */
const brainLetter: DeadLetter = {
  job: {
    message: {
      id: "msg-brain",
      channel: "webhook",
      receivedAt: FAILED_AT - 60_000,
      message: { senderId: "alice", senderName: "Alice", text: "hello", conversationId: "conv-1" },
      idempotencyKey: "key-1",
    },
    delivered: 0,
    attempts: 3,
    stepStartedAt: FAILED_AT - 50_000,
  },
  error: { code: "brain_failed", message: "the brain answered 401", retryable: false, status: 401 },
  attempts: 3,
  diedAt: FAILED_AT,
};

/** A message whose second reply could not be delivered. */
const replyLetter: DeadLetter = {
  job: {
    message: {
      id: "msg-reply",
      channel: "webhook",
      receivedAt: FAILED_AT,
      message: { senderId: "bob", text: "hi", conversationId: "conv\u001b[31m-2" },
    },
    replies: [
      { id: "r1", sequence: 1, body: JSON.stringify({ text: "one", conversation_id: "conv-2" }) },
      { id: "r2", sequence: 2, body: JSON.stringify({ text: "two", conversation_id: "conv-2" }) },
    ],
    delivered: 1,
    attempts: 12,
  },
  error: { code: "delivery_timeout", message: "no answer within 10000 ms", retryable: true },
  attempts: 12,
  diedAt: FAILED_AT + 1_000,
};

async function stateWith(letters: readonly DeadLetter[]): Promise<string> {
  const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
  const db = openStateDb(stateDir);
  const store = openSqliteLanes(db);
  for (const letter of letters) await buryIn(store, letter);
  db.close();
  return writeTempConfig({
    state_dir: stateDir,
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
    routes: [{ channel: "webhook", brain: "echo" }],
  });
}

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return runCliCaptured(args, {});
}

describe("dead-letters list", () => {
  it("shows a table for people: id, channel, conversation, failed at in UTC, attempts, stage, error", async () => {
    const config = await stateWith([brainLetter, replyLetter]);
    const { code, out, err } = await cli(["dead-letters", "list", "--config", config]);
    expect(code).toBe(0);
    expect(err).toBe("2 dead letter(s)\n");
    const [heading, first, second, ...rest] = out.trimEnd().split("\n");
    expect(rest).toEqual([]);
    expect(heading?.split(/\s{2,}/)).toEqual([
      "ID",
      "CHANNEL",
      "CONVERSATION",
      "FAILED AT (UTC)",
      "ATTEMPTS",
      "STAGE",
      "ERROR",
    ]);
    expect(first?.split(/\s{2,}/)).toEqual([
      "msg-brain",
      "webhook",
      "conv-1",
      "2026-01-02T03:04:05Z",
      "3",
      "brain",
      "brain_failed (HTTP 401)",
    ]);
    expect(second?.split(/\s{2,}/)).toEqual([
      "msg-reply",
      "webhook",
      "conv\\u001b[31m-2",
      "2026-01-02T03:04:06Z",
      "12",
      "reply",
      "delivery_timeout",
    ]);
    // Columns line up, and no escape sequence from a client reaches the terminal.
    expect(first?.indexOf("webhook")).toBe(heading?.indexOf("CHANNEL"));
    expect(out).not.toContain("\u001b");
    // Nothing of the internal record: no camelCase keys, no epoch milliseconds.
    expect(out).not.toMatch(/conversationId|diedAt|\d{13}/);
  });

  it("--json prints one snake_case item per line, with RFC 3339 times and replies as JSON", async () => {
    const config = await stateWith([brainLetter, replyLetter]);
    const { code, out } = await cli(["dead-letters", "list", "--json", "--config", config]);
    expect(code).toBe(0);
    const items = out
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown);
    expect(items).toEqual([
      {
        id: "msg-brain",
        channel: "webhook",
        conversation_id: "conv-1",
        message_id: "msg-brain",
        failed_at: "2026-01-02T03:04:05.678Z",
        attempts: 3,
        stage: "brain",
        error: { code: "brain_failed", message: "the brain answered 401", status: 401, detail: null },
        message: {
          sender_id: "alice",
          sender_name: "Alice",
          text: "hello",
          media_url: null,
          media_type: null,
          received_at: "2026-01-02T03:03:05.678Z",
          idempotency_key: "key-1",
        },
        replies: [],
      },
      {
        id: "msg-reply",
        channel: "webhook",
        conversation_id: "conv\u001b[31m-2",
        message_id: "msg-reply",
        failed_at: "2026-01-02T03:04:06.678Z",
        attempts: 12,
        stage: "reply",
        error: { code: "delivery_timeout", message: "no answer within 10000 ms", status: null, detail: null },
        message: {
          sender_id: "bob",
          sender_name: null,
          text: "hi",
          media_url: null,
          media_type: null,
          received_at: "2026-01-02T03:04:05.678Z",
          idempotency_key: null,
        },
        replies: [
          { id: "r1", sequence: 1, delivered: true, body: { text: "one", conversation_id: "conv-2" } },
          { id: "r2", sequence: 2, delivered: false, body: { text: "two", conversation_id: "conv-2" } },
        ],
      },
    ]);
    // JSON escapes the control character, so --json is safe on a terminal too.
    expect(out).not.toContain("\u001b");
  });

  it("prints nothing on stdout when there are no dead letters", async () => {
    const config = await stateWith([]);
    expect(await cli(["dead-letters", "list", "--config", config])).toEqual({
      code: 0,
      out: "",
      err: "0 dead letter(s)\n",
    });
    expect((await cli(["dead-letters", "list", "--json", "--config", config])).out).toBe("");
  });

  it("exits 2 on options that belong to the other action", async () => {
    const config = await stateWith([]);
    expect((await cli(["dead-letters", "list", "--all", "--config", config])).code).toBe(2);
    expect((await cli(["dead-letters", "replay", "--all", "--json", "--config", config])).code).toBe(2);
  });
});

describe("formatDeadLetterTable", () => {
  it("keeps ids whole and shortens a long conversation id", () => {
    const long = {
      ...brainLetter,
      job: {
        ...brainLetter.job,
        message: {
          ...brainLetter.job.message,
          id: "x".repeat(40),
          message: { ...brainLetter.job.message.message, conversationId: "c".repeat(100) },
        },
      },
    };
    const table = formatDeadLetterTable([deadLetterItem({ id: "x".repeat(40), channel: "webhook", letter: long })]);
    expect(table).toContain("x".repeat(40));
    expect(table).toContain(`${"c".repeat(31)}…`);
    expect(table).not.toContain("c".repeat(32));
  });
});
