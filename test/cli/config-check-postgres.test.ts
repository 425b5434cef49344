import { describe, expect, inject, it } from "vitest";
import { freePort } from "../support/free-port.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

const SECRET = "a-long-enough-channel-secret-0123456789";

async function configWith(extra: Record<string, unknown>): Promise<string> {
  return writeTempConfig({
    postgres_url_env: "DATABASE_URL",
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
    routes: [{ channel: "webhook", brain: "echo" }],
    ...extra,
  });
}

describe("config check with postgres_url_env", () => {
  it("--preflight connects and reports the server's version", async () => {
    const file = await configWith({});
    const { code, out, err } = await runCliCaptured(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: SECRET,
      DATABASE_URL: inject("postgresUrl"),
    });
    // The only line on stderr is the preflight's warning that the receiver (port 9) takes no connection.
    expect(err).toMatch(/^ {2}warning channels\[0\]\.webhook\.outbound_url: cannot connect to 127\.0\.0\.1:9 /);
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(code).toBe(0);
    expect(out).toMatch(/postgres_url_env: connected to PostgreSQL \d+/);
  });

  it("--preflight names the path and the fix when the database cannot be reached, without the password", async () => {
    const file = await configWith({});
    const port = await freePort();
    const { code, err } = await runCliCaptured(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: SECRET,
      DATABASE_URL: `postgres://webhook:s3cret-password@127.0.0.1:${port}/webhook`,
    });
    expect(code).toBe(1);
    expect(err).toContain("postgres_url_env: cannot connect to the database DATABASE_URL names");
    expect(err).toContain("check the host, port, database, user and password");
    expect(err).not.toContain("s3cret-password");
  });

  it("--preflight says how to write a password with a reserved character, without printing it", async () => {
    const file = await configWith({});
    const { code, err } = await runCliCaptured(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: SECRET,
      DATABASE_URL: "postgres://webhook:1234/hunter2@127.0.0.1:5432/webhook",
    });
    expect(code).toBe(1);
    expect(err).toContain("percent-encode reserved characters in the user name, the password and the database name");
    expect(err).not.toContain("hunter2");
  });

  it("--preflight tells how to set the variable when it is missing", async () => {
    const file = await configWith({});
    const { code, err } = await runCliCaptured(["config", "check", "--preflight", file], { WEBHOOK_SECRET: SECRET });
    expect(code).toBe(1);
    expect(err).toContain('export DATABASE_URL="postgres://');
  });

  it.each([
    [{ state_dir: "/var/lib/webhook-channel" }, "postgres_url_env", "cannot be combined with state_dir"],
    [{ delivery_thread: true }, "delivery_thread", "is not supported with postgres_url_env"],
  ])("refuses %j beside it", async (extra, path, message) => {
    const file = await configWith(extra);
    const { code, err } = await runCliCaptured(["config", "check", file], {});
    expect(code).toBe(1);
    expect(err).toContain(`${path}: ${message}`);
  });
});
