import { describe, expect, it } from "vitest";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

const COMMANDS = [
  ["dead-letters", "list"],
  ["messages", "list"],
] as const;

/** Runs `command action` offline on a configuration whose Postgres URL is `url`. */
async function runOn(command: string, action: string, url: string): Promise<{ code: number; err: string }> {
  const file = await writeTempConfig({
    postgres_url_env: "DATABASE_URL",
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
    routes: [{ channel: "webhook", brain: "echo" }],
  });
  return runCliCaptured([command, action, "--config", file], { DATABASE_URL: url });
}

describe("the CLI's offline commands on a misencoded Postgres URL", () => {
  it.each(COMMANDS)("%s %s says how to write the password, without printing it", async (command, action) => {
    const { code, err } = await runOn(command, action, "postgres://webhook:1234/hunter2@127.0.0.1:5432/webhook");
    expect(code).toBe(1);
    expect(err).toContain("DATABASE_URL: the postgres URL cannot be read");
    expect(err).not.toContain("hunter2");
  });

  it.each(
    COMMANDS.flatMap(([command, action]) => [
      [command, action, "postgres://webhook:hun/ter2@127.0.0.1:5432/webhook"],
      [command, action, "postgres://webhook:hunter2@127.0.0.1:99999/webhook"],
    ]),
  )(
    "%s %s says what to check in a connection string pg cannot read (%s), not to retry",
    async (command, action, url) => {
      const { code, err } = await runOn(command, action, url);
      expect(code).toBe(1);
      expect(err).toBe(
        "DATABASE_URL: the connection string is not a URL pg can read: check its host and port (1 to 65535), and percent-encode reserved characters in its password (/ as %2F, # as %23, ? as %3F, @ as %40)\n",
      );
    },
  );
});
