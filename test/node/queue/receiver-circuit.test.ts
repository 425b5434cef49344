import { afterEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../../src/core/clock.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import { type Job, type JobOutcome, newJob } from "../../../src/core/lifecycle/job.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import { circuitPolicyOf } from "../../../src/core/receiver/receiver-circuit.js";
import { createNodeConsumer } from "../../../src/node/consumer/node-consumer.js";
import { createJobQueue, type JobQueue } from "../../../src/node/queue/job-queue.js";
import { createMemoryBackend } from "../../../src/node/state/memory-backend.js";
import { configDocument } from "../../support/configs.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { createLogSink } from "../../support/log-sink.js";

// Captured before any test fakes timers: real I/O still needs real waits.
const realSetTimeout = globalThis.setTimeout;
const realWait = (ms: number) => new Promise<void>((resolve) => realSetTimeout(resolve, ms));

const MINUTE = 60_000;

interface Harness {
  readonly queue: JobQueue;
  readonly deadLetters: DeadLetter[];
  readonly receiverStates: boolean[];
  readonly lines: Record<string, unknown>[];
  close(): Promise<void>;
}

/** The Node job queue over the real consumer (echo brain, undici poster) posting to `receiver`. */
async function harness(receiver: JsonTestServer, delivery: Record<string, unknown>): Promise<Harness> {
  const validated = validateConfig(configDocument({ outbound_url: `${receiver.origin}/replies`, delivery }));
  if (!validated.ok) throw new Error(JSON.stringify(validated.problems));
  const { config } = validated;
  const { logger, lines } = createLogSink("info");
  const receiverStates: boolean[] = [];
  const metrics = {
    ...(await import("../../../src/core/metrics/noop-metrics.js")).noopMetrics,
    receiverState: (_channel: string, up: boolean) => receiverStates.push(up),
  };
  const built = await createNodeConsumer({
    config,
    logger,
    env: () => undefined,
    state: createMemoryBackend(systemClock),
    random: () => 0.5,
    metrics,
  });
  const deadLetters: DeadLetter[] = [];
  const channel = config.channels[0];
  if (channel === undefined) throw new Error("no channel");
  const queue = createJobQueue({
    capacity: 1_000,
    run: (job, onProgress, admission) => built.consumer.run(job, onProgress, admission),
    receiver: { channel: "webhook", policy: () => circuitPolicyOf(channel.webhook) },
    onDeadLetter: (letter) => {
      deadLetters.push(letter);
    },
    logger,
    metrics,
  });
  return {
    queue,
    deadLetters,
    receiverStates,
    lines,
    close: async () => {
      await queue.drain(0);
      await built.close();
    },
  };
}

const message = (id: string, conversationId: string): QueuedMessage => ({
  id,
  channel: "webhook",
  receivedAt: Date.now(),
  message: { senderId: conversationId, conversationId, text: id },
});

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
      // The first POST of each conversation (all at once), then one probe at a time.
      expect(duringOutage).toBeLessThanOrEqual(conversations + 12);
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
    let inFlight = 0;
    let mostInFlight = 0;
    const receiver = await startJsonServer(async () => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await realWait(5);
      inFlight -= 1;
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
      const sentWhileDown = receiver.requests.length;
      mostInFlight = 0;
      await realWait(1_000);
      // Probes only, one at a time, on the (capped) schedule: a few, not ten conversations' retries.
      expect(mostInFlight).toBeLessThanOrEqual(1);
      expect(receiver.requests.length - sentWhileDown).toBeLessThanOrEqual(8);
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

describe("the receiver gate's edge cases, with runs written by hand", () => {
  const POLICY = {
    failuresToOpen: 1,
    initialDelayMs: 50,
    maxDelayMs: 50,
    probeTimeoutMs: 5_000,
    target: "http://receiver.example",
  };
  const reply = { id: "r", sequence: 1, body: "{}" };
  const unanswered = (job: Job): JobOutcome => ({
    kind: "unanswered",
    job,
    until: Date.now() + 86_400_000,
    verdict: { kind: "retry", job: { ...job, attempts: job.attempts + 1 }, delayMs: 10 },
  });

  it("runs again at once a job that was told to wait while the receiver came back up", async () => {
    const { logger } = createLogSink("error");
    const runs: string[] = [];
    let releaseB: ((outcome: JobOutcome) => void) | undefined;
    const queue = createJobQueue({
      capacity: 10,
      logger,
      receiver: { channel: "webhook", policy: () => POLICY },
      run: async (job, _progress, admission) => {
        const id = job.message.id;
        runs.push(`${id}:${admission}`);
        const withReplies: Job = { ...job, replies: [reply] };
        if (id === "A" && admission === "send") return unanswered(withReplies);
        if (id === "A") return { kind: "done", job: withReplies, answered: true };
        if (admission === "wait") {
          // B asks its brain while A's probe brings the receiver back up.
          return new Promise<JobOutcome>((resolve) => {
            releaseB = resolve;
          });
        }
        return { kind: "done", job: withReplies, answered: true };
      },
    });
    try {
      await queue.enqueue(message("A", "a"));
      for (let i = 0; i < 100 && queue.receiver()?.up !== false; i += 1) await realWait(5);
      await queue.enqueue(message("B", "b"));
      for (let i = 0; i < 200 && !runs.includes("A:probe"); i += 1) await realWait(5);
      expect(queue.receiver()?.up).toBe(true);
      releaseB?.({
        kind: "wait",
        job: { ...newJob(message("B", "b")), replies: [reply] },
        until: Date.now() + 86_400_000,
      });
      for (let i = 0; i < 100 && queue.size > 0; i += 1) await realWait(5);
      expect(runs).toContain("B:send");
      expect(queue.size).toBe(0);
    } finally {
      await queue.drain(0);
    }
  });

  it("does not spin a job held until a max age beyond the longest timer", async () => {
    const { logger } = createLogSink("error");
    let heldRuns = 0;
    const queue = createJobQueue({
      capacity: 10,
      logger,
      // Down after one failure, the first probe a second later: none during this test.
      receiver: { channel: "webhook", policy: () => ({ ...POLICY, initialDelayMs: 1_000, maxDelayMs: 1_000 }) },
      run: async (job, _progress, admission) => {
        const withReplies: Job = { ...job, replies: [reply] };
        if (admission !== "wait") return unanswered(withReplies);
        heldRuns += 1;
        return { kind: "wait", job: withReplies, until: Date.now() + 30 * 86_400_000 };
      },
    });
    try {
      await queue.enqueue(message("down", "down"));
      for (let i = 0; i < 100 && queue.receiver()?.up !== false; i += 1) await realWait(5);
      await queue.enqueue(message("far", "far"));
      await realWait(200);
      expect(heldRuns).toBe(1);
    } finally {
      await queue.drain(0);
    }
  });

  it("starts afresh, waking what waited, when the channel's outbound_url names another receiver", async () => {
    const { logger } = createLogSink("error");
    const runs: string[] = [];
    let policy = POLICY;
    const queue = createJobQueue({
      capacity: 10,
      logger,
      receiver: { channel: "webhook", policy: () => policy },
      run: async (job, _progress, admission) => {
        runs.push(`${job.message.id}:${admission}`);
        const withReplies: Job = { ...job, replies: [reply] };
        if (policy.target === POLICY.target)
          return admission === "wait"
            ? { kind: "wait", job: withReplies, until: Date.now() + 86_400_000 }
            : unanswered(withReplies);
        return { kind: "done", job: withReplies, answered: true };
      },
    });
    try {
      await queue.enqueue(message("one", "one"));
      for (let i = 0; i < 100 && queue.receiver()?.up !== false; i += 1) await realWait(5);
      policy = { ...POLICY, target: "http://backup.example", initialDelayMs: 60_000, maxDelayMs: 60_000 };
      await queue.enqueue(message("two", "two"));
      for (let i = 0; i < 100 && queue.size > 0; i += 1) await realWait(5);
      expect(queue.size).toBe(0);
      expect(queue.receiver()?.up).toBe(true);
    } finally {
      await queue.drain(0);
    }
  });

  it("probes again on the schedule after a probe fails, though a lane began to wait while it was out", async () => {
    const { logger } = createLogSink("error");
    let probes = 0;
    let probing: (() => void) | undefined;
    const queue = createJobQueue({
      capacity: 10,
      logger,
      receiver: { channel: "webhook", policy: () => POLICY },
      run: async (job, _progress, admission) => {
        const withReplies: Job = { ...job, replies: [reply] };
        if (admission === "wait") return { kind: "wait", job: withReplies, until: Date.now() + 86_400_000 };
        if (admission === "probe") {
          probes += 1;
          await new Promise<void>((resolve) => {
            probing = resolve;
            setTimeout(resolve, 30);
          });
        }
        return unanswered(withReplies);
      },
    });
    try {
      await queue.enqueue(message("A", "a"));
      for (let i = 0; i < 100 && probes === 0; i += 1) await realWait(5);
      // While the probe is out, another conversation's message begins to wait.
      await queue.enqueue(message("B", "b"));
      probing?.();
      await realWait(400);
      // Probes 50 ms apart (each failing), not one every probeTimeoutMs (5 s).
      expect(probes).toBeGreaterThanOrEqual(3);
    } finally {
      await queue.drain(0);
    }
  });
});
