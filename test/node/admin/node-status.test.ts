import { afterEach, describe, expect, it, vi } from "vitest";
import type { StatusReport } from "../../../src/core/admin/status-report.js";
import { DEFAULT_BUFFER_CAPACITY } from "../../../src/core/config/config-schema.js";
import { noopMetrics } from "../../../src/core/metrics/noop-metrics.js";
import { createConsoleTally } from "../../../src/node/admin/console-tally.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";

const ADMIN_SECRET = "node-status-admin-secret-0123456789";

let harness: ServiceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function status(secret = ADMIN_SECRET): Promise<Response> {
  if (harness === undefined) throw new Error("no service");
  return await fetch(`${harness.baseUrl}/admin/status`, { headers: { authorization: `Bearer ${secret}` } });
}

describe("GET /admin/status on Node", () => {
  it("reports each channel's counts, queue and receiver, the brains and the dead letters", async () => {
    harness = await startHarness({}, {}, { admin: { token_env: "ADMIN_SECRET" } }, { ADMIN_SECRET });
    expect((await harness.post({ sender_id: "alice", text: "hi" })).status).toBe(200);
    // The count follows the reply's POST: ask until the message is finished.
    const report = await vi.waitFor(async () => {
      const response = await status();
      expect(response.status).toBe(200);
      const answer = (await response.json()) as StatusReport;
      expect(answer.channels[0]?.counts?.delivered).toBe(1);
      return answer;
    });
    expect(report).toMatchObject({
      runtime: "node",
      channels: [
        {
          channel: "webhook",
          counts: { accepted: 1, delivered: 1, retrying: 0, dead_lettered: 0 },
          queue: { depth: 0, capacity: DEFAULT_BUFFER_CAPACITY, oldest_pending_at: null },
          receiver: { up: true, since: null, waiting: 0, next_probe_at: null },
        },
      ],
      brains: [],
      dead_letters: 0,
      not_available: [],
    });
    expect(Date.parse(report.counting_since ?? "")).toBeLessThanOrEqual(Date.parse(report.generated_at));
  });

  it("answers 401 with a wrong secret and never repeats it", async () => {
    harness = await startHarness({}, {}, { admin: { token_env: "ADMIN_SECRET" } }, { ADMIN_SECRET });
    const response = await status("wrong-secret");
    expect(response.status).toBe(401);
    expect(await response.text()).not.toContain("wrong-secret");
  });
});

describe("the console's tally", () => {
  it("notes the brains' calls in flight and when a pause began and ends, passing every event on", () => {
    let now = 5_000;
    const tally = createConsoleTally(true, () => now);
    const seen: string[] = [];
    const metrics = tally.watching({
      ...noopMetrics,
      brainPaused: (brain, paused, untilMs) => seen.push(`${brain}:${paused}:${untilMs}`),
    });
    metrics?.brainInFlight("bot", 2);
    metrics?.brainPaused("bot", true, 7_000);
    expect(tally.brains()).toEqual([
      {
        brain: "bot",
        in_flight: 2,
        paused: true,
        paused_since: new Date(5_000).toISOString(),
        paused_until: new Date(7_000).toISOString(),
      },
    ]);
    // A call in flight lengthened the pause: the start stays, the end moves.
    now = 6_000;
    metrics?.brainPaused("bot", true, 15_000);
    expect(tally.brains()[0]).toMatchObject({
      paused_since: new Date(5_000).toISOString(),
      paused_until: new Date(15_000).toISOString(),
    });
    metrics?.brainPaused("bot", false);
    expect(tally.brains()).toEqual([
      { brain: "bot", in_flight: 2, paused: false, paused_since: null, paused_until: null },
    ]);
    expect(seen).toEqual(["bot:true:7000", "bot:true:15000", "bot:false:undefined"]);
  });

  it("counts nothing and hands the metrics through untouched without admin", () => {
    const tally = createConsoleTally(false, () => 0);
    expect(tally.watching(noopMetrics)).toBe(noopMetrics);
    tally.record("webhook", "accepted");
    expect(tally.counts("webhook")).toEqual({ accepted: 0, delivered: 0, retrying: 0, dead_lettered: 0 });
  });
});
