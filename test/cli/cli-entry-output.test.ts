/**
 * The built command's output through a pipe, as scripts read it: a large `--json` arrives whole,
 * and a reader that stops early ends the command quietly.
 */
import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { type JsonTestServer, startJsonServer } from "../support/json-test-server.js";
import { runBuiltCli } from "../support/spawn-node.js";

const ADMIN = "a".repeat(32);
/** Well past a pipe's buffer, which an exit that does not wait cuts the output at. */
const ITEMS = 1_500;

/** An admin API whose message list answers one page of `ITEMS` messages. */
function largeTimeline(): Promise<JsonTestServer> {
  const items = Array.from({ length: ITEMS }, (_, index) => ({
    message_id: `m-${String(index).padStart(6, "0")}-${"x".repeat(40)}`,
    channel: "webhook",
    conversation_id: `c${index}`,
    status: "delivered",
    accepted_at: "2026-11-30T10:00:00.000Z",
    updated_at: "2026-11-30T10:00:01.000Z",
  }));
  return startJsonServer(() => ({ status: 200, body: { items, next_cursor: null } }));
}

let server: JsonTestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the webhook-channel command's output through a pipe", () => {
  it("hands a --json page far larger than a pipe's buffer on whole", async () => {
    server = await largeTimeline();
    const args = ["messages", "list", "--limit", "500", "--json", "--url", server.origin];
    const { code, out } = await runBuiltCli(args, { WEBHOOK_ADMIN_SECRET: ADMIN });
    expect(code).toBe(0);
    expect(out.length).toBeGreaterThan(300_000);
    expect((JSON.parse(out) as { items: unknown[] }).items).toHaveLength(ITEMS);
  });

  it("ends quietly, as a tool stopped by SIGPIPE does, when its reader closes the pipe early", async () => {
    server = await largeTimeline();
    const child = spawn(
      process.execPath,
      ["dist/cli.js", "messages", "list", "--limit", "500", "--json", "--url", server.origin],
      { env: { PATH: process.env.PATH, WEBHOOK_ADMIN_SECRET: ADMIN }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // Read the first piece, then close the pipe, as `| head -c 10` does.
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code).toBe(141);
    expect(stderr).not.toContain("EPIPE");
    expect(stderr).not.toContain("    at ");
  });
});
