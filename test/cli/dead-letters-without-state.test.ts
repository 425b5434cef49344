import { afterEach, describe, expect, it } from "vitest";
import { configDocument } from "../support/configs.js";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";
import { waitFor } from "../support/wait-for.js";

const ADMIN = "admin-secret-without-state-dir-0123456789";
let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("offline dead-letters on a configuration without state_dir", () => {
  it("with admin, says the running service keeps them in memory and gives the --url command", async () => {
    const file = await writeTempConfig(configDocument({}, { admin: { token_env: "WEBHOOK_ADMIN_SECRET" } }));
    const { code, out, err } = await runCliCaptured(["dead-letters", "list", "--config", file]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toContain(`${file} has no "state_dir"`);
    expect(err).toContain("the running service keeps them in its memory");
    expect(err).toContain("with the admin secret in WEBHOOK_ADMIN_SECRET");
    expect(err).toContain("\n  npx webhook-channel dead-letters list --url http://127.0.0.1:8090\n");
  });

  it("repeats the action and its options, reaches a wildcard bind on loopback, and names another admin variable", async () => {
    const file = await writeTempConfig(
      configDocument({ bind: "0.0.0.0:9000" }, { admin: { token_env: "OPS_ADMIN_SECRET" } }),
    );
    const { code, err } = await runCliCaptured(["dead-letters", "replay", "--id", "m-1", "--id", "a b", "-c", file]);
    expect(code).toBe(1);
    expect(err).toContain(
      "npx webhook-channel dead-letters replay --id m-1 --id 'a b' --url http://127.0.0.1:9000 --admin-token-env OPS_ADMIN_SECRET\n",
    );
  });

  it("without admin, says a dead letter was only its log line and how to keep the next ones", async () => {
    const file = await writeTempConfig(configDocument());
    const { code, err } = await runCliCaptured(["dead-letters", "list", "--config", file]);
    expect(code).toBe(1);
    expect(err).toContain('a dead letter is only its log line (level error, msg "dead letter: ...")');
    expect(err).toContain('set "state_dir"');
    expect(err).toContain('"admin": {"token_env": "WEBHOOK_ADMIN_SECRET"}');
    expect(err).not.toContain("--url http");
  });

  it("gives a command that lists the running service's dead letters", async () => {
    harness = await startHarness(
      { delivery: { max_attempts: 1 } },
      { status: () => 400 },
      { admin: { token_env: "WEBHOOK_ADMIN_SECRET" } },
      { WEBHOOK_ADMIN_SECRET: ADMIN },
    );
    const response = await harness.post({ sender_id: "a", text: "refused" });
    const { message_id } = (await response.json()) as { message_id: string };
    const logs = harness.logs;
    await waitFor(() => logs.find((line) => String(line.msg).startsWith("dead letter:")), 5_000, "the dead letter");

    // The file the operator has: the same service, its bind written out.
    const file = await writeTempConfig(
      configDocument(
        { bind: harness.baseUrl.replace("http://", "") },
        { admin: { token_env: "WEBHOOK_ADMIN_SECRET" } },
      ),
    );
    const offline = await runCliCaptured(["dead-letters", "list", "--config", file]);
    const command = /npx webhook-channel (dead-letters .*)\n/.exec(offline.err)?.[1];
    expect(command).toBeDefined();
    const online = await runCliCaptured((command ?? "").split(" "), { WEBHOOK_ADMIN_SECRET: ADMIN });
    expect(online).toMatchObject({ code: 0, err: "1 dead letter(s)\n", out: expect.stringContaining(message_id) });
  });
});
