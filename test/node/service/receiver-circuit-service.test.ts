/**
 * The receiver circuit as an operator sees it, through the running service with a real
 * receiver on port 0: `/readyz`, `/metrics` and the log lines while the receiver is down and
 * when it is back, a receiver that hangs, and a `Retry-After` that sets when the probe comes.
 * The rules themselves are proven in test/core/receiver and test/node/queue/receiver-circuit.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function readyz(baseUrl: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${baseUrl}/readyz`)).json()) as Record<string, unknown>;
}

/** The value of one series of the exposition, or undefined when it is absent. */
async function series(baseUrl: string, line: string): Promise<number | undefined> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const found = text.split("\n").find((candidate) => candidate.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

/** The `text` of a reply the receiver got. */
function textOf(reply: { readonly body: unknown }): string {
  return String((reply.body as { text?: unknown }).text);
}

const UP = 'webhook_channel_receiver_up{channel="webhook"}';
const WENT_DOWN = 'webhook_channel_receiver_state_changes_total{channel="webhook",state="down"}';
const CAME_UP = 'webhook_channel_receiver_state_changes_total{channel="webhook",state="up"}';

describe("the receiver circuit, seen from outside the service", () => {
  it("lists a receiver that is down in /readyz and /metrics, logs what waits, and logs what resumes when it is back", async () => {
    let down = true;
    const answered: string[] = [];
    harness = await startHarness(
      { delivery: { circuit_failures: 2, initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 4 } },
      {
        status: (reply) => {
          if (!down) answered.push(textOf(reply));
          return down ? 503 : 200;
        },
      },
    );
    const { baseUrl } = harness;
    expect(await series(baseUrl, UP)).toBe(1);
    for (const sender of ["a", "b", "c"]) {
      expect((await harness.post({ sender_id: sender, text: `to ${sender}` })).status).toBe(200);
    }
    await waitFor(async () => ((await readyz(baseUrl)).receivers_down === undefined ? undefined : true), 5_000, "down");
    const report = await readyz(baseUrl);
    // Accepting is still right while replies wait: the status stays ready.
    expect(report.status).toBe("ready");
    expect(report.receivers_down).toEqual([
      expect.objectContaining({ channel: "webhook", waiting: expect.any(Number), down_for_ms: expect.any(Number) }),
    ]);
    expect(await series(baseUrl, UP)).toBe(0);
    expect(await series(baseUrl, WENT_DOWN)).toBe(1);
    // Only `failures`: what `pending` says depends on whether c was accepted before a's quick
    // retry failed; the case below checks it where nothing races.
    const wentDown = harness.logs.find((line) => String(line.msg).startsWith("receiver down"));
    expect(wentDown).toMatchObject({ level: "warn", channel: "webhook", failures: 2 });

    // Four attempts at most, 50 to 200 ms apart: without the circuit every message would be a
    // dead letter by now.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(harness.logs.filter((line) => String(line.msg).includes("dead letter"))).toEqual([]);

    down = false;
    await waitFor(() => (answered.length >= 3 ? true : undefined), 5_000, "the three replies");
    expect(answered.sort()).toEqual(["to a", "to b", "to c"]);
    expect(await readyz(baseUrl)).not.toHaveProperty("receivers_down");
    expect(await series(baseUrl, UP)).toBe(1);
    expect(await series(baseUrl, CAME_UP)).toBe(1);
    const cameUp = harness.logs.find((line) => String(line.msg).startsWith("receiver up"));
    expect(cameUp).toMatchObject({ level: "info", channel: "webhook", waiting: expect.any(Number) });
    expect(Number(cameUp?.waiting)).toBeGreaterThanOrEqual(1);
  });

  it("logs every message not yet finished as pending when the receiver goes down", async () => {
    // The receiver never answers and each POST fails only at its 2 s time limit: the three first
    // POSTs (a, b, c) are out before any fails, and a's retry cannot fail before a's first POST
    // failed and its own 2 s passed. So the third failure, which takes the receiver down, comes
    // after c was accepted, whatever the box's load: three messages are pending then.
    harness = await startHarness(
      { delivery: { circuit_failures: 3, timeout_ms: 2_000, initial_delay_ms: 1_000, max_delay_ms: 1_000 } },
      { status: () => "hang" },
    );
    const { baseUrl } = harness;
    for (const sender of ["a", "b", "c"]) {
      expect((await harness.post({ sender_id: sender, text: `to ${sender}` })).status).toBe(200);
    }
    await waitFor(
      async () => ((await readyz(baseUrl)).receivers_down === undefined ? undefined : true),
      10_000,
      "down",
    );
    const wentDown = harness.logs.find((line) => String(line.msg).startsWith("receiver down"));
    expect(wentDown).toMatchObject({ level: "warn", channel: "webhook", failures: 3, pending: 3 });
  });

  it("counts a receiver that never answers (timeout_ms) toward taking it down", async () => {
    harness = await startHarness(
      { delivery: { circuit_failures: 2, timeout_ms: 200, initial_delay_ms: 50, max_delay_ms: 500 } },
      { status: () => "hang" },
    );
    const { baseUrl } = harness;
    expect((await harness.post({ sender_id: "a", text: "into the void" })).status).toBe(200);
    await waitFor(async () => ((await readyz(baseUrl)).receivers_down === undefined ? undefined : true), 5_000, "down");
    expect(await series(baseUrl, UP)).toBe(0);
    expect(harness.logs.find((line) => String(line.msg).startsWith("receiver down"))).toMatchObject({ failures: 2 });
  });

  it("waits for the receiver's Retry-After before the probe instead of the shorter retry schedule", async () => {
    const postedAt: number[] = [];
    harness = await startHarness(
      { delivery: { circuit_failures: 1, initial_delay_ms: 50, max_delay_ms: 5_000 } },
      {
        status: () => {
          postedAt.push(performance.now());
          // The first answer takes it down and asks for 2 s; the probe then finds it back.
          return postedAt.length === 1 ? { status: 503, headers: { "retry-after": "2" } } : 200;
        },
      },
    );
    expect((await harness.post({ sender_id: "a", text: "later, please" })).status).toBe(200);
    await waitFor(() => (postedAt.length === 2 ? true : undefined), 5_000, "the probe");
    const [first, probe] = postedAt;
    if (first === undefined || probe === undefined) throw new Error("expected two posts");
    // The retry schedule alone would have probed 50 ms later.
    expect(probe - first).toBeGreaterThanOrEqual(1_900);
  });
});
