import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";
import { sample, scrape } from "./scrape.js";

/** Quick retries so the tests take milliseconds, not minutes. */
const FAST = { initial_delay_ms: 20, max_delay_ms: 50 };
const CHANNEL = { channel: "webhook" };
let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Scrapes until `name{labels}` reaches `value` (consumer events land after the reply is received). */
async function until(name: string, labels: Record<string, string>, value: number): Promise<string> {
  let last = "";
  const running = harness;
  if (running === undefined) throw new Error("no harness");
  const deadline = Date.now() + 5_000;
  for (;;) {
    last = await scrape(running.baseUrl);
    if (sample(last, name, labels) === value) return last;
    if (Date.now() > deadline) throw new Error(`${name} ${JSON.stringify(labels)} never reached ${value}:\n${last}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const deliveryThread of [false, true]) {
  const extra = deliveryThread ? { delivery_thread: true } : {};
  describe(`GET /metrics on Node${deliveryThread ? " with delivery_thread" : ""}`, () => {
    it("counts a delivered message: request 200, accepted, brain ok, delivered, end to end", async () => {
      harness = await startHarness({}, {}, extra);
      const running = harness;
      expect((await running.post({ sender_id: "a", text: "hello" })).status).toBe(200);
      await waitFor(() => (running.replies.length === 1 ? true : undefined));
      const text = await until("webhook_channel_end_to_end_seconds_count", CHANNEL, 1);
      expect(sample(text, "webhook_channel_requests_total", { ...CHANNEL, code: "200" })).toBe(1);
      expect(sample(text, "webhook_channel_messages_accepted_total", CHANNEL)).toBe(1);
      expect(sample(text, "webhook_channel_brain_calls_total", { ...CHANNEL, brain: "echo", result: "ok" })).toBe(1);
      expect(sample(text, "webhook_channel_brain_duration_seconds_count", { ...CHANNEL, brain: "echo" })).toBe(1);
      expect(sample(text, "webhook_channel_replies_delivered_total", CHANNEL)).toBe(1);
      expect(sample(text, "webhook_channel_delivery_duration_seconds_count", CHANNEL)).toBe(1);
      expect(sample(text, "webhook_channel_dead_letters_total", CHANNEL)).toBe(0);
      expect(sample(text, "webhook_channel_queue_depth", CHANNEL)).toBe(0);
      expect(sample(text, "webhook_channel_oldest_pending_seconds")).toBe(0);
      expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
      if (!deliveryThread) {
        // The shipped dashboard only names series that a service exposes.
        // Those of brains that call out have samples only with such a brain: their HELP line then.
        for (const name of dashboardSeries()) {
          expect(text, name).toContain(BRAIN_SERIES.has(name) ? `# HELP ${name} ` : `\n${name}`);
        }
      }
    });

    it("counts a retried reply POST and a dead letter", async () => {
      harness = await startHarness({ delivery: { ...FAST, max_attempts: 2 } }, { status: () => 500 }, extra);
      expect((await harness.post({ sender_id: "a", text: "x" })).status).toBe(200);
      const text = await until("webhook_channel_dead_letters_total", CHANNEL, 1);
      expect(sample(text, "webhook_channel_reply_retries_total", CHANNEL)).toBe(1);
      expect(sample(text, "webhook_channel_replies_delivered_total", CHANNEL)).toBe(0);
      expect(sample(text, "webhook_channel_dead_letters", CHANNEL)).toBe(1);
      // A histogram child shows once observed: nothing finished, so no end-to-end sample yet.
      expect(sample(text, "webhook_channel_end_to_end_seconds_count", CHANNEL) ?? 0).toBe(0);
    });

    it("counts every failed reply POST tried again, the receiver circuit's probes among them", async () => {
      const delivery = { ...FAST, max_attempts: 1000, circuit_failures: 2 };
      harness = await startHarness({ delivery }, { status: () => 503 }, extra);
      const running = harness;
      expect((await running.post({ sender_id: "a", text: "x" })).status).toBe(200);
      // Two failures take the receiver down; the POSTs after them are probes, one at a time.
      await waitFor(() => (running.replies.length >= 6 ? true : undefined), 10_000, "four probes");
      await waitFor(
        async () => {
          const text = await scrape(running.baseUrl);
          return (sample(text, "webhook_channel_reply_retries_total", CHANNEL) ?? 0) >= 5 ? true : undefined;
        },
        5_000,
        "a retry counted for each failed POST but the one under way",
      );
    });
  });
}

describe("GET /metrics on Node", () => {
  it("counts a refused request with its status code", async () => {
    harness = await startHarness();
    expect((await harness.post({ sender_id: "a", text: "x" }, { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await harness.post("{", {})).status).toBe(400);
    const text = await scrape(harness.baseUrl);
    expect(sample(text, "webhook_channel_requests_total", { ...CHANNEL, code: "401" })).toBe(1);
    expect(sample(text, "webhook_channel_requests_total", { ...CHANNEL, code: "400" })).toBe(1);
    expect(sample(text, "webhook_channel_messages_accepted_total", CHANNEL)).toBe(0);
  });

  it("counts an answer of the Hono route (a GET on the channel path is a 405)", async () => {
    harness = await startHarness();
    expect((await fetch(`${harness.baseUrl}/webhook`)).status).toBe(405);
    const text = await scrape(harness.baseUrl);
    expect(sample(text, "webhook_channel_requests_total", { ...CHANNEL, code: "405" })).toBe(1);
  });

  it("shows the backlog: queue depth, capacity and the age of the oldest pending message", async () => {
    harness = await startHarness({ buffer_capacity: 7 }, { status: () => "hang" });
    expect((await harness.post({ sender_id: "a", text: "x" })).status).toBe(200);
    expect((await harness.post({ sender_id: "b", text: "y" })).status).toBe(200);
    // Not a wait for an event: 50 ms of age for the oldest message, asserted below.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = await scrape(harness.baseUrl);
    expect(sample(text, "webhook_channel_queue_depth", CHANNEL)).toBe(2);
    expect(sample(text, "webhook_channel_queue_capacity", CHANNEL)).toBe(7);
    expect(sample(text, "webhook_channel_oldest_pending_seconds")).toBeGreaterThan(0.03);
  });

  it("answers the Prometheus content type", async () => {
    harness = await startHarness();
    const response = await fetch(`${harness.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    expect(response.headers.get("content-type")).toContain("version=0.0.4");
  });

  it("is a 404 with observability.metrics false", async () => {
    harness = await startHarness({}, {}, { observability: { metrics: false } });
    expect((await fetch(`${harness.baseUrl}/metrics`)).status).toBe(404);
  });
});

/** Series with samples only once a brain that calls out is built (or reported tokens); this test's brain is echo. */
const BRAIN_SERIES = new Set([
  "webhook_channel_brain_in_flight",
  "webhook_channel_brain_paused",
  "webhook_channel_brain_tokens_total",
]);

/** The metric names in the queries of docs/grafana-dashboard.json. */
function dashboardSeries(): Set<string> {
  const text = readFileSync(new URL("../../../docs/grafana-dashboard.json", import.meta.url), "utf8");
  return new Set(text.match(/\b(?:webhook_channel|process|nodejs)_[a-z_]+/g) ?? []);
}
