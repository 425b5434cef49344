/**
 * `.` and `..` given as an id to the CLI's `--url` commands: fetch reads them as the path's dot
 * segments, so `dead-letters replay --id .` asked for `/admin/dead-letters/replay`, the replay
 * of every letter of every channel, and `show --id ..` for the console's page. They are no
 * message's or letter's id: each command says so and asks the service nothing.
 */
import { afterEach, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { waitFor } from "../support/wait-for.js";

const ADMIN = "admin-secret-for-the-cli-0123";
const env = { WEBHOOK_ADMIN_SECRET: ADMIN };
let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

it("takes . and .. for unknown ids in dead-letters and messages: no letter is replayed or deleted", async () => {
  harness = await startHarness(
    { delivery: { max_attempts: 1 } },
    { status: () => 400 },
    { admin: { token_env: "ADMIN_SECRET" } },
    { ADMIN_SECRET: ADMIN },
  );
  const url = harness.baseUrl;
  for (const text of ["first", "second"]) await harness.post({ sender_id: "cli", conversation_id: `c-${text}`, text });
  const listed = async () => {
    const { out } = await runCliCaptured(["dead-letters", "list", "--url", url, "--json"], env);
    return (JSON.parse(out) as { items: unknown[] }).items.length;
  };
  await waitFor(async () => ((await listed()) === 2 ? true : undefined), 10_000, "two dead letters");

  for (const id of [".", ".."]) {
    const replay = await runCliCaptured(["dead-letters", "replay", "--url", url, "--id", id, "--json"], env);
    expect(replay).toMatchObject({ code: 1, out: '{"replayed":0}\n' });
    for (const command of ["show", "delete"]) {
      const run = await runCliCaptured(["dead-letters", command, "--url", url, "--id", id], env);
      expect(run.code).toBe(1);
      expect(run.err).toContain(id);
      expect(run.err).not.toMatch(/JSON|doctype/i);
    }
    const shown = await runCliCaptured(["messages", "show", id, "--url", url], env);
    expect(shown).toMatchObject({ code: 1, out: "" });
    expect(shown.err).not.toMatch(/JSON|doctype/i);
  }
  expect(await listed()).toBe(2);
});
