/**
 * `messages --config` on a configuration whose timeline nothing outside the service can read:
 * the memory mode (the message says how to reach the running service, or how to keep them) and
 * a timeline that is turned off.
 */
import { describe, expect, it } from "vitest";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

function configWith(extra: Record<string, unknown>): Promise<string> {
  return writeTempConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "0.0.0.0:8090", outbound_url: "http://127.0.0.1:9/x" },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    ...extra,
  });
}

describe("messages --config without state", () => {
  it("gives the --url command that reads a running service's memory when admin is on", async () => {
    const config = await configWith({ admin: { token_env: "OPS_ADMIN" } });
    const { code, out, err } = await runCliCaptured(["messages", "show", "m 1", "--json", "--config", config]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toContain(`${config} has neither "state_dir" nor "postgres_url_env"`);
    expect(err).toContain(
      "\n  npx webhook-channel messages show 'm 1' --json --url http://127.0.0.1:8090 --admin-token-env OPS_ADMIN\n",
    );
    const listed = await runCliCaptured(["messages", "list", "--status", "waiting", "--all", "--config", config]);
    expect(listed.err).toContain(
      "npx webhook-channel messages list --status waiting --all --url http://127.0.0.1:8090 --admin-token-env OPS_ADMIN\n",
    );
  });

  it("says how to keep timelines when neither state nor admin is configured", async () => {
    const { code, err } = await runCliCaptured(["messages", "list", "--config", await configWith({})]);
    expect(code).toBe(1);
    expect(err).toContain('set "admin": {"token_env": "WEBHOOK_ADMIN_SECRET"}');
    expect(err).toContain('"state_dir"');
  });

  it("says that the timeline is off", async () => {
    const config = await configWith({ state_dir: "state", timeline: { max_messages: 0 } });
    const { code, err } = await runCliCaptured(["messages", "list", "--config", config]);
    expect(code).toBe(1);
    expect(err).toContain("turns the message timeline off (timeline.retention_hours or timeline.max_messages is 0)");
  });

  it("reports an unusable configuration file", async () => {
    const { code, err } = await runCliCaptured(["messages", "list", "--config", "/nonexistent/config.json"]);
    expect(code).toBe(1);
    expect(err).toContain("/nonexistent/config.json");
  });
});
