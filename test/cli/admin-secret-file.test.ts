/**
 * The admin secret of `--url` commands read as the service reads it: from the file
 * `WEBHOOK_ADMIN_SECRET_FILE` names (a container secret) when the variable itself is unset, and a
 * file that cannot be read named with its variable, never its content.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type JsonTestServer, startJsonServer } from "../support/json-test-server.js";
import { runCliCaptured } from "../support/run-cli-captured.js";

const ADMIN = "admin-secret-from-a-file-0123456789";
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function adminApi(): Promise<JsonTestServer> {
  const server = await startJsonServer((request) =>
    request.headers.authorization === `Bearer ${ADMIN}`
      ? { status: 200, body: { items: [], next_cursor: null } }
      : { status: 401, body: { code: "unauthorized" } },
  );
  cleanups.push(() => server.close());
  return server;
}

describe("the admin secret of --url commands", () => {
  it("is read from WEBHOOK_ADMIN_SECRET_FILE, without its trailing newline, when the variable is unset", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-channel-admin-file-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, "admin");
    await writeFile(file, `${ADMIN}\n`);
    const server = await adminApi();
    const run = await runCliCaptured(["dead-letters", "list", "--url", server.origin, "--json"], {
      WEBHOOK_ADMIN_SECRET_FILE: file,
    });
    expect(run.code).toBe(0);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${ADMIN}`);
  });

  it("names the variable and the file it cannot read", async () => {
    const server = await adminApi();
    const run = await runCliCaptured(["dead-letters", "list", "--url", server.origin], {
      WEBHOOK_ADMIN_SECRET_FILE: "/nonexistent/admin-secret",
    });
    expect(run.code).toBe(1);
    expect(run.err).toContain("WEBHOOK_ADMIN_SECRET");
    expect(run.err).toContain("/nonexistent/admin-secret");
    expect(server.requests).toEqual([]);
  });
});
