/**
 * `messages` with `--config` on a configuration with `state_dir`: the CLI reads the timeline from
 * the SQLite file itself, alike while the service runs and after it stopped, and prints what the
 * admin API would.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  ADMIN,
  expectCliReadsTimelines,
  ONE_ATTEMPT,
  refuseBadConversation,
  sendAndSettle,
} from "../support/message-timelines.js";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { runBuiltCli, writeTempConfig } from "../support/spawn-node.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("messages --config with state_dir", () => {
  it("reads the timeline from state_dir while the service runs and after it stopped", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
    harness = await startHarness(
      ONE_ATTEMPT,
      { status: refuseBadConversation },
      { state_dir: stateDir, admin: { token_env: "ADMIN_SECRET" } },
      { ADMIN_SECRET: ADMIN },
    );
    const config = await writeTempConfig({
      state_dir: stateDir,
      channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    const sent = await sendAndSettle(harness);
    await expectCliReadsTimelines(harness, sent, ["--config", config], {});
    const whileRunning = await runCliCaptured(["messages", "show", sent.deadLettered, "--json", "--config", config]);
    const hint = await runCliCaptured(["messages", "list", "--limit", "1", "--config", config]);
    expect(hint.err).toMatch(
      /; next page: npx webhook-channel messages list --limit 1 --cursor \S+ --config \S+ \(or --all/,
    );

    await harness.close();
    harness = undefined;
    const stopped = await runBuiltCli(["messages", "show", sent.deadLettered, "--json", "--config", config]);
    expect(stopped).toMatchObject({ code: 0, out: whileRunning.out.trimEnd() });
    const people = await runBuiltCli(["messages", "list", "--conversation", "c-ok", "--config", config]);
    expect(people.code).toBe(0);
    expect(people.out).toMatch(new RegExp(`^MESSAGE ID .*\\n${sent.delivered} +webhook +c-ok +delivered `));
    expect(await runBuiltCli(["messages", "show", "no-such-message", "--config", config])).toMatchObject({
      code: 1,
      out: "",
      err: expect.stringContaining("no message with id no-such-message in the timeline"),
    });
    expect(await runBuiltCli(["messages", "list", "--status", "lost", "--config", config])).toMatchObject({
      code: 2,
      err: expect.stringContaining(
        "--status must be one of accepted, retrying, waiting, delivered, dead_letter, replayed",
      ),
    });
  });
});
