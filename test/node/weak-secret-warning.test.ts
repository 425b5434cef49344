// A weak inbound or admin secret is a warning at start and after a reload, never a refusal:
// `WEBHOOK_SECRET=dev-secret npm run demo` stays a one-command start; so are the configuration's
// other warnings, the ones `config check` prints. Runs against dist/.
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newSecret } from "../../src/cli/new-secret.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { waitFor } from "../support/wait-for.js";

type LogLine = { level: string; msg: string } & Record<string, unknown>;
let spawned: Spawned | undefined;

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

function logLines(process: Spawned): LogLine[] {
  return process.lines.map((line) => JSON.parse(line) as LogLine);
}

const weakLines = (lines: readonly LogLine[]) => lines.filter((line) => line.msg.startsWith("weak secret:"));

const config = () =>
  writeTempConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    admin: { token_env: "ADMIN_SECRET" },
    shutdown_timeout_ms: 2_000,
  });

describe("a weak secret on node dist/node.js", () => {
  it("logs a warning naming the variable, never the value, and keeps serving", async () => {
    spawned = spawnNode("dist/node.js", ["--config", await config()], {
      WEBHOOK_SECRET: "dev-secret",
      ADMIN_SECRET: "admin-0123",
    });
    const url = await listeningUrl(spawned);
    const process = spawned;
    const warnings = await waitFor(() => {
      const found = weakLines(logLines(process));
      return found.length === 2 ? found : undefined;
    });
    expect(warnings).toEqual([
      expect.objectContaining({
        level: "warn",
        variable: "WEBHOOK_SECRET",
        path: "channels[0].token_env",
        msg: expect.stringContaining("the secret in WEBHOOK_SECRET is a placeholder from an example"),
      }),
      expect.objectContaining({
        level: "warn",
        variable: "ADMIN_SECRET",
        path: "admin.token_env",
        msg: expect.stringContaining("is shorter than 32 characters"),
      }),
    ]);
    expect(warnings[0]?.msg).toContain("npx webhook-channel secret");
    expect(process.lines.join("\n")).not.toMatch(/dev-secret|admin-0123/);

    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: "Bearer dev-secret", "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "alice", text: "hello" }),
    });
    expect(response.status).toBe(200);
    process.child.kill("SIGTERM");
    expect(await process.exited).toBe(0);
  });

  it("warns again after a SIGHUP reload that brings a weak secret, and not for strong ones", async () => {
    const folder = await mkdtemp(join(tmpdir(), "webhook-channel-secret-"));
    const secretFile = join(folder, "secret");
    const strong = newSecret();
    await writeFile(secretFile, `${strong}\n`);
    spawned = spawnNode("dist/node.js", ["--config", await config()], {
      WEBHOOK_SECRET_FILE: secretFile,
      ADMIN_SECRET: newSecret(),
    });
    await listeningUrl(spawned);
    const process = spawned;

    // Rotating away from a strong secret to a placeholder: the new one is weak.
    await writeFile(secretFile, `replace-me ${strong}\n`);
    const before = process.lines.length;
    process.child.kill("SIGHUP");
    const warning = await waitFor(() => weakLines(logLines(process).slice(before))[0], 10_000, "the warning");
    // Everything the start logged came before the reload: no warning for the strong secrets.
    expect(weakLines(logLines(process).slice(0, before))).toEqual([]);
    expect(warning).toMatchObject({ level: "warn", variable: "WEBHOOK_SECRET" });
    expect(warning.msg).toContain("the first (new) of the two secrets in WEBHOOK_SECRET is a placeholder");
    expect(logLines(process).slice(before)).toContainEqual(
      expect.objectContaining({ msg: "configuration reloaded", secrets_changed: ["WEBHOOK_SECRET"] }),
    );
    expect(process.lines.join("\n")).not.toContain("replace-me");
  });
});

describe("the configuration's warnings on node dist/node.js", () => {
  it("logs at start the warnings config check prints, and keeps serving", async () => {
    const file = await writeTempConfig({
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          webhook: {
            bind: "127.0.0.1:0",
            outbound_url: "http://127.0.0.1:9/replies",
            delivery: { max_attempts: 2, circuit_failures: 5, max_age_ms: 864_000_000 },
          },
        },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
      admin: { token_env: "ADMIN_SECRET" },
      timeline: { retention_hours: 1 },
      shutdown_timeout_ms: 2_000,
    });
    spawned = spawnNode("dist/node.js", ["--config", file], {
      WEBHOOK_SECRET: newSecret(),
      ADMIN_SECRET: newSecret(),
    });
    await listeningUrl(spawned);
    const warnings = logLines(spawned).filter(
      (line) => line.level === "warn" && line.msg.startsWith("configuration: "),
    );
    expect(warnings.map((line) => line.path).sort()).toEqual([
      "channels[0].webhook.delivery.max_attempts",
      "timeline.retention_hours",
    ]);
    expect(warnings.map((line) => line.msg).join("\n")).toContain("is below circuit_failures");
  });
});
