/**
 * The receiver circuit on the Node job queue, over the real consumer and a real receiver: through
 * an outage it holds replies instead of spending their attempts, probes one POST at a time, and
 * delivers in order once the receiver is back; the gate's edge cases, with runs written by hand,
 * are in receiver-circuit-edge-cases.test.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { harness, message, realWait } from "./receiver-circuit-harness.js";

const MINUTE = 60_000;

/** The texts each conversation's receiver got, in arrival order, from 2xx answers only. */
function deliveredTexts(receiver: JsonTestServer, answeredAt: Map<number, number>): Map<string, string[]> {
  const byConversation = new Map<string, string[]>();
  receiver.requests.forEach((request, index) => {
    if (answeredAt.get(index) !== 200) return;
    const body = request.body as { conversation_id: string; text: string };
    const list = byConversation.get(body.conversation_id) ?? [];
    list.push(body.text);
    byConversation.set(body.conversation_id, list);
  });
  return byConversation;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("receiver circuit on the Node job queue", () => {
  it("dead-letters nothing in a 20-minute outage with the default policy, then delivers every reply in order", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const start = Date.now();
    const outageEnds = start + 20 * MINUTE;
    const statuses = new Map<number, number>();
    let duringOutage = 0;
    const receiver = await startJsonServer(() => {
      const index = statuses.size;
      const status = Date.now() < outageEnds ? 503 : 200;
      if (status === 503) duringOutage += 1;
      statuses.set(index, status);
      return { status, body: {} };
    });
    const h = await harness(receiver, {});
    try {
      const conversations = 20;
      for (let round = 1; round <= 2; round += 1) {
        for (let c = 0; c < conversations; c += 1) await h.queue.enqueue(message(`c${c}-m${round}`, `c${c}`));
      }
      // Injected time, two seconds at a time, with real waits for the real sockets. The probe
      // after the outage comes on the schedule: 1 s doubling to the 10-minute cap, 27 minutes in.
      for (let elapsed = 0; elapsed < 35 * MINUTE && h.queue.size > 0; elapsed += 2_000) {
        await realWait(3);
        await vi.advanceTimersByTimeAsync(2_000);
      }
      for (let i = 0; i < 200 && h.queue.size > 0; i += 1) await realWait(5);

      expect(h.deadLetters).toEqual([]);
      expect(h.queue.size).toBe(0);
      const delivered = deliveredTexts(receiver, statuses);
      expect(delivered.size).toBe(conversations);
      for (const [conversation, texts] of delivered)
        expect(texts).toEqual([`${conversation}-m1`, `${conversation}-m2`]);
      // The first POST of each conversation (all at once), the retries of the failures counted
      // while it was still up (at most circuit_failures - 1, by the default of 5, however the
      // answers interleave), then one probe at a time: ten in twenty minutes, from 1 s doubling.
      expect(duringOutage).toBeLessThanOrEqual(conversations + 4 + 10);
      expect(h.receiverStates).toEqual([false, true]);
    } finally {
      vi.useRealTimers();
      await h.close();
      await receiver.close();
    }
  }, 60_000);

  it("without the circuit, the same outage dead-letters replies (what the circuit prevents)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const outageEnds = Date.now() + 20 * MINUTE;
    const receiver = await startJsonServer(() => ({ status: Date.now() < outageEnds ? 503 : 200, body: {} }));
    const h = await harness(receiver, { circuit_failures: 0 });
    try {
      for (let c = 0; c < 20; c += 1) await h.queue.enqueue(message(`c${c}-m1`, `c${c}`));
      for (let elapsed = 0; elapsed < 25 * MINUTE && h.queue.size > 0; elapsed += 1_000) {
        await realWait(2);
        await vi.advanceTimersByTimeAsync(1_000);
      }
      // With random() = 0.5, the waits between twelve attempts add up to 13.5 minutes: every message dies.
      expect(h.deadLetters.length).toBeGreaterThan(0);
      expect(h.receiverStates).toEqual([]);
    } finally {
      vi.useRealTimers();
      await h.close();
      await receiver.close();
    }
  }, 60_000);

  it("holds replies without spending attempts while the receiver is down, and probes with one POST at a time", async () => {
    let down = true;
    const receiver = await startJsonServer(async () => {
      await realWait(5);
      return { status: down ? 503 : 200, body: {} };
    });
    const h = await harness(receiver, {
      circuit_failures: 2,
      initial_delay_ms: 100,
      max_delay_ms: 200,
      max_attempts: 3,
    });
    try {
      for (let c = 0; c < 10; c += 1) await h.queue.enqueue(message(`m${c}`, `c${c}`));
      for (let i = 0; i < 200 && h.receiverStates.length === 0; i += 1) await realWait(5);
      expect(h.receiverStates).toEqual([false]);
      // Counted where the POSTs start: one started before the circuit opened may reach a loaded
      // receiver after it, beside a probe, and says nothing of the circuit.
      h.posts.mark();
      await realWait(1_000);
      // Probes only, one at a time, on the (capped) schedule: a few, not ten conversations' retries.
      expect(h.posts.mostSinceMark).toBe(1);
      expect(h.posts.startedSinceMark).toBeLessThanOrEqual(8);
      expect(h.deadLetters).toEqual([]);
      down = false;
      for (let i = 0; i < 400 && h.queue.size > 0; i += 1) await realWait(5);
      expect(h.queue.size).toBe(0);
      expect(h.deadLetters).toEqual([]);
      expect(h.receiverStates).toEqual([false, true]);
      const downLine = h.lines.find(
        (line) => line.msg === String(line.msg) && String(line.msg).startsWith("receiver down"),
      );
      expect(downLine).toMatchObject({ level: "warn", channel: "webhook" });
      const upLine = h.lines.find((line) => String(line.msg).startsWith("receiver up"));
      expect(upLine).toMatchObject({ level: "info", channel: "webhook" });
      expect(upLine?.waiting).toBeGreaterThan(0);
    } finally {
      await h.close();
      await receiver.close();
    }
  });

  it("takes a receiver that refuses connections down, and a 4xx stays the message's own failure", async () => {
    const refusing = await startJsonServer(() => ({ status: 200, body: {} }));
    const origin = refusing.origin;
    await refusing.close();
    const closed = { origin, port: 0, requests: [], close: async () => undefined } as unknown as JsonTestServer;
    const h = await harness(closed, { circuit_failures: 3, initial_delay_ms: 50, max_delay_ms: 100 });
    try {
      for (let c = 0; c < 4; c += 1) await h.queue.enqueue(message(`m${c}`, `c${c}`));
      for (let i = 0; i < 200 && h.receiverStates.length === 0; i += 1) await realWait(5);
      expect(h.receiverStates).toEqual([false]);
      expect(h.queue.receiver()).toMatchObject({ channel: "webhook", up: false });
      expect(h.deadLetters).toEqual([]);
    } finally {
      await h.close();
    }

    const rejecting = await startJsonServer(() => ({ status: 422, body: { error: "bad" } }));
    const r = await harness(rejecting, { circuit_failures: 2 });
    try {
      for (let c = 0; c < 3; c += 1) await r.queue.enqueue(message(`m${c}`, `c${c}`));
      for (let i = 0; i < 200 && r.deadLetters.length < 3; i += 1) await realWait(5);
      expect(r.deadLetters.map((letter) => letter.error.status)).toEqual([422, 422, 422]);
      expect(r.receiverStates).toEqual([]);
    } finally {
      await r.close();
      await rejecting.close();
    }
  });

  it("makes a held reply a dead letter once max_age_ms has passed, with the receiver's last error", async () => {
    const receiver = await startJsonServer(() => ({ status: 503, body: {} }));
    const h = await harness(receiver, {
      circuit_failures: 1,
      initial_delay_ms: 5_000,
      max_delay_ms: 5_000,
      max_age_ms: 300,
    });
    try {
      await h.queue.enqueue(message("m1", "c1"));
      for (let i = 0; i < 200 && h.receiverStates.length === 0; i += 1) await realWait(5);
      await h.queue.enqueue(message("m2", "c2"));
      for (let i = 0; i < 200 && h.deadLetters.length < 2; i += 1) await realWait(10);
      expect(h.deadLetters.map((letter) => letter.job.message.id).sort()).toEqual(["m1", "m2"]);
      expect(h.deadLetters[0]?.error).toMatchObject({ code: "delivery_failed" });
      // The first POST took it down; the second message never posted (held, then too old).
      expect(receiver.requests.length).toBe(1);
    } finally {
      await h.close();
      await receiver.close();
    }
  });
});
