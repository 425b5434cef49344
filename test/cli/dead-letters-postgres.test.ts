/**
 * `dead-letters` with a configuration naming `postgres_url_env`: the CLI reads the database all
 * replicas share, so one command lists and replays every replica's dead letters.
 */
import pg from "pg";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { conversationKey } from "../../src/core/conversation/conversation-store.js";
import type { DeadLetter } from "../../src/core/dead-letters/dead-letter.js";
import { claimLanes } from "../../src/node/replicas/lane-statements.js";
import { openPostgresBackend } from "../../src/node/state/postgres/postgres-backend.js";
import { createLogSink } from "../support/log-sink.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

function letter(id: string, diedAt: number): DeadLetter {
  return {
    job: {
      message: {
        id,
        channel: "webhook",
        receivedAt: diedAt - 1_000,
        message: { senderId: "alice", conversationId: "c1", text: id },
      },
      delivered: 0,
      attempts: 3,
    },
    error: { code: "brain_failed", message: "the brain answered 401", retryable: false, status: 401 },
    attempts: 3,
    diedAt,
  };
}

let url = "";
let config = "";

beforeAll(async () => {
  url = await createTestDatabase(inject("postgresUrl"));
  // Migrated and filled as a replica would: each letter buried by the lane store, under a claim.
  const backend = await openPostgresBackend(url, createLogSink().logger, systemClock);
  const key = conversationKey("webhook", "c1");
  const { pool, replica } = backend.postgres;
  const [claim] = await claimLanes(pool, replica, true, [
    { conversation: key, channel: "webhook", jobId: "", reclaim: true },
  ]);
  const ticket = { key, epoch: claim?.epoch ?? 0 };
  await backend.lanes.bury(ticket, letter("msg-1", Date.UTC(2026, 0, 2)));
  await backend.lanes.bury(ticket, letter("msg-2", Date.UTC(2026, 0, 3)));
  await backend.lanes.bury(ticket, letter("msg-3", Date.UTC(2026, 0, 4)));
  await backend.close();
  config = await writeTempConfig({
    postgres_url_env: "DATABASE_URL",
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
    routes: [{ channel: "webhook", brain: "echo" }],
  });
});

describe("dead-letters with postgres_url_env", () => {
  it("lists, shows, replays and deletes the dead letters in the shared database", async () => {
    const env = { DATABASE_URL: url };
    const listed = await runCliCaptured(["dead-letters", "list", "--config", config], env);
    expect(listed.code).toBe(0);
    expect(listed.err).toBe("3 dead letter(s)\n");
    expect(listed.out).toMatch(/msg-1[\s\S]*msg-2[\s\S]*msg-3/);

    const shown = await runCliCaptured(["dead-letters", "show", "--id", "msg-2", "--json", "--config", config], env);
    expect(shown.code).toBe(0);
    expect((JSON.parse(shown.out) as { id: string }).id).toBe("msg-2");

    const replayed = await runCliCaptured(["dead-letters", "replay", "--id", "msg-1", "--config", config], env);
    expect(replayed.code).toBe(0);
    expect(replayed.out).toBe("replayed msg-1\n");
    // Recorded in the shared timeline, as a replay through any replica's admin API is.
    const timeline = await runCliCaptured(["messages", "show", "msg-1", "--json", "--config", config], env);
    expect(JSON.parse(timeline.out)).toMatchObject({ status: "replayed", events: [{ type: "replayed" }] });
    const deleted = await runCliCaptured(["dead-letters", "delete", "--id", "msg-3", "--config", config], env);
    expect(deleted.code).toBe(0);

    // The replayed job waits for a replica to take it; the deleted letter is gone.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const jobs = await client.query<{ id: string; state: string }>("SELECT id, state FROM webhook_channel.jobs");
      expect(jobs.rows).toEqual([{ id: "msg-1", state: "replay" }]);
      const letters = await client.query<{ id: string }>("SELECT id FROM webhook_channel.dead_letters ORDER BY id");
      expect(letters.rows).toEqual([{ id: "msg-2" }]);
    } finally {
      await client.end();
    }
  });

  it("says which variable to set when the URL is missing", async () => {
    const { code, err } = await runCliCaptured(["dead-letters", "list", "--config", config], {});
    expect(code).toBe(1);
    expect(err).toContain("DATABASE_URL is not set");
  });
});
