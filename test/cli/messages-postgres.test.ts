/**
 * `messages` with `--config` on a configuration naming `postgres_url_env`: the CLI reads the
 * timeline from the database every replica shares, as the admin API of any replica answers it.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import {
  ADMIN,
  expectCliReadsTimelines,
  ONE_ATTEMPT,
  refuseBadConversation,
  sendAndSettle,
} from "../support/message-timelines.js";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("messages --config with postgres_url_env", () => {
  it("reads the timeline of the shared database, alike with the service running and stopped", async () => {
    const url = await createTestDatabase(inject("postgresUrl"));
    harness = await startHarness(
      ONE_ATTEMPT,
      { status: refuseBadConversation },
      { postgres_url_env: "DATABASE_URL", admin: { token_env: "ADMIN_SECRET" } },
      { DATABASE_URL: url, ADMIN_SECRET: ADMIN },
    );
    const config = await writeTempConfig({
      postgres_url_env: "DATABASE_URL",
      channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    const env = { DATABASE_URL: url };
    const sent = await sendAndSettle(harness);
    await expectCliReadsTimelines(harness, sent, ["--config", config], env);
    const whileRunning = await runCliCaptured(["messages", "show", sent.delivered, "--json", "--config", config], env);

    await harness.close();
    harness = undefined;
    expect(await runCliCaptured(["messages", "show", sent.delivered, "--json", "--config", config], env)).toEqual(
      whileRunning,
    );
  });

  it("says which variable to set when the URL is missing, and when the database cannot be read", async () => {
    const config = await writeTempConfig({
      postgres_url_env: "DATABASE_URL",
      channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    const unset = await runCliCaptured(["messages", "list", "--config", config], {});
    expect(unset).toMatchObject({ code: 1, out: "", err: expect.stringContaining("DATABASE_URL is not set") });
    const unreachable = await runCliCaptured(["messages", "show", "m1", "--config", config], {
      DATABASE_URL: "postgres://user:secret-password@127.0.0.1:9/none",
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toMatch(/^DATABASE_URL: /);
    // What pg said (as the dead-letters command says it), not the service's "retry shortly".
    expect(unreachable.err).toContain("ECONNREFUSED");
    expect(unreachable.err).not.toContain("secret-password");
  });
});
