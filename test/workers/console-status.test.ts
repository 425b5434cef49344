/**
 * The console's status port on Workers, inside workerd: `GET /admin/status` reads each channel's
 * receiver object and the dead-letter store, and says what a Worker cannot show.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { StatusReport } from "../../src/core/admin/status-report.js";
import { conversationKey } from "../../src/core/conversation/conversation-store.js";
import worker from "../../src/workers/index.js";
import { NOT_ON_WORKERS } from "../../src/workers/workers-status.js";
import { forgetConversations, objectsUse } from "./support/conversations.js";
import { captureLogs } from "./support/fake-receiver.js";
import { OUTBOUND_URL, SECRET } from "./support/test-config.js";
import { type TestEnv, testEnv } from "./support/test-env.js";

const ADMIN_SECRET = "workers-console-admin-secret-abcdefghijklmnop";

/** A channel of its own (the receiver object is per channel), down after one unanswered POST. */
function consoleEnv(): { env: TestEnv; channel: string } {
  const channel = `console-${crypto.randomUUID()}`;
  const config = {
    channels: [
      {
        type: "webhook",
        name: channel,
        token_env: "WEBHOOK_SECRET",
        webhook: { path: "/console", outbound_url: OUTBOUND_URL, delivery: { circuit_failures: 1 } },
      },
    ],
    routes: [{ channel, brain: "echo" }],
    admin: { token_env: "ADMIN_SECRET" },
  };
  return { env: objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET, ADMIN_SECRET })), channel };
}

function get(env: TestEnv, path: string, secret?: string): Promise<Response> {
  const headers: Record<string, string> = secret === undefined ? {} : { authorization: `Bearer ${secret}` };
  return worker.fetch(new Request(`https://channel.example${path}`, { headers }), env);
}

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

describe("the console on Workers", () => {
  it("reports each receiver from its object, the dead letters listed, and null with a reason for the rest", async () => {
    captureLogs();
    const { env, channel } = consoleEnv();
    const response = await get(env, "/admin/status", ADMIN_SECRET);
    expect(response.status).toBe(200);
    const report = (await response.json()) as StatusReport;
    expect(report).toMatchObject({
      runtime: "workers",
      counting_since: null,
      brains: null,
      not_available: NOT_ON_WORKERS,
      channels: [{ channel, counts: null, queue: null, receiver: { up: true, since: null, waiting: 0 } }],
    });
    expect(typeof report.dead_letters).toBe("number");

    const receiver = env.RECEIVERS.get(env.RECEIVERS.idFromName(channel));
    await receiver.report(channel, { answered: false }, false, conversationKey(channel, "waits"));
    const down = (await (await get(env, "/admin/status", ADMIN_SECRET)).json()) as StatusReport;
    const [standing] = down.channels;
    expect(standing?.receiver).toMatchObject({ up: false, waiting: 1 });
    expect(Date.parse(standing?.receiver?.since ?? "")).toBeGreaterThan(0);
    expect(Date.parse(standing?.receiver?.next_probe_at ?? "")).toBeGreaterThan(0);
  });

  it("answers 401 to the status without the admin secret, and serves the page without it", async () => {
    captureLogs();
    const { env } = consoleEnv();
    expect((await get(env, "/admin/status")).status).toBe(401);
    expect((await get(env, "/admin/status", SECRET)).status).toBe(401);
    const page = await get(env, "/admin/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await page.text()).toContain('<script src="/admin/console.js" defer></script>');
    expect((await get(env, "/admin/console.js")).status).toBe(200);
  });
});
