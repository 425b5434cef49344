/**
 * The receiver gate of the Node job queue at its edges, with runs written by hand: a job told to
 * wait while the receiver came back up, a hold beyond the longest timer, a channel whose
 * outbound_url names another receiver, a failed probe while a lane began to wait, and a probe
 * that ran out before its lane could start.
 */
import { describe, expect, it } from "vitest";
import { type Job, type JobOutcome, newJob } from "../../../src/core/lifecycle/job.js";
import { MAX_TIMER_MS } from "../../../src/core/timer-limit.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";
import { HAND_POLICY, HAND_REPLY, message, realWait } from "./receiver-circuit-harness.js";

describe("the receiver gate's edge cases, with runs written by hand", () => {
  const POLICY = HAND_POLICY;
  const reply = HAND_REPLY;
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

  it("waits for a probe whose time limit lies beyond the longest timer without a timer that overflows", async () => {
    const { logger } = createLogSink("error");
    const overflows: string[] = [];
    const onWarning = (warning: Error): void => {
      if (warning.name === "TimeoutOverflowWarning") overflows.push(warning.message);
    };
    process.on("warning", onWarning);
    let probes = 0;
    const queue = createJobQueue({
      capacity: 10,
      logger,
      // The longest POST timeout the configuration takes makes a probe's limit twice as long.
      receiver: { channel: "webhook", policy: () => ({ ...POLICY, probeTimeoutMs: 2 * MAX_TIMER_MS + 5_000 }) },
      run: async (job, _progress, admission) => {
        const withReplies: Job = { ...job, replies: [reply] };
        if (admission === "send") return unanswered(withReplies);
        probes += 1;
        // The probe's POST hangs for the rest of the test.
        return new Promise<JobOutcome>(() => undefined);
      },
    });
    try {
      await queue.enqueue(message("down", "down"));
      await waitFor(() => (probes > 0 ? true : undefined), 5_000, "the probe");
      await realWait(200);
      expect(overflows).toEqual([]);
    } finally {
      process.off("warning", onWarning);
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
      await waitFor(() => (probes > 0 ? true : undefined), 5_000, "the first probe");
      // While the probe is out, another conversation's message begins to wait.
      await queue.enqueue(message("B", "b"));
      probing?.();
      // Probes on the schedule (each failing, 100 ms apart at the least): three within a few
      // hundred ms, given 3 s on a loaded machine; probing again only once probeTimeoutMs (5 s)
      // ran out would bring the third at 10 s.
      await waitFor(() => (probes >= 3 ? true : undefined), 3_000, "two more probes");
    } finally {
      await queue.drain(0);
    }
  });

  it("runs a lane whose probe ran out before it could start as a waiting one: never two probes at once", async () => {
    const { logger } = createLogSink("error");
    const runs: string[] = [];
    const blocked = new Map<string, () => void>();
    let probing = 0;
    let mostProbing = 0;
    const queue = createJobQueue({
      capacity: 10,
      // Two runs at a time: X1 and X2 hold both slots while A's probe is granted and runs out.
      concurrency: 2,
      logger,
      receiver: {
        channel: "webhook",
        policy: () => ({ ...POLICY, initialDelayMs: 300, maxDelayMs: 300, probeTimeoutMs: 200 }),
      },
      run: async (job, _progress, admission) => {
        const id = job.message.id;
        runs.push(`${id}:${admission}`);
        const withReplies: Job = { ...job, replies: [reply] };
        if (id.startsWith("X") && !blocked.has(id)) await new Promise<void>((resolve) => blocked.set(id, resolve));
        if (admission === "probe") {
          probing += 1;
          mostProbing = Math.max(mostProbing, probing);
          // Out long enough for a second probe, were one granted, to run beside it (and within
          // its own time, after which the keeper may grant the next).
          await realWait(100);
          probing -= 1;
          return { kind: "done", job: withReplies, answered: true };
        }
        if (admission === "wait") return { kind: "wait", job: withReplies, until: Date.now() + 86_400_000 };
        // The receiver is back from the first probe on.
        if (runs.some((run) => run.endsWith(":probe"))) return { kind: "done", job: withReplies, answered: true };
        return unanswered(withReplies);
      },
    });
    try {
      await queue.enqueue(message("A", "a"));
      await waitFor(() => (queue.receiver()?.up === false ? true : undefined), 5_000, "the receiver down");
      await queue.enqueue(message("X1", "x1"));
      await queue.enqueue(message("X2", "x2"));
      await waitFor(() => (blocked.size === 2 ? true : undefined), 5_000, "X1 and X2 running");
      // A is granted the probe 300 ms after the receiver went down, and cannot start; its probe
      // runs out 200 ms later. Nothing outside the keeper shows a grant: time passes.
      await realWait(800);
      blocked.get("X1")?.();
      await waitFor(() => (runs.includes("A:wait") || runs.includes("A:probe") ? true : undefined), 5_000, "A's run");
      blocked.get("X2")?.();
      await waitFor(() => (queue.size === 0 ? true : undefined), 5_000, "every job done");
      expect(runs).toContain("A:wait");
      expect(mostProbing).toBe(1);
    } finally {
      for (const release of blocked.values()) release();
      await queue.drain(0);
    }
  });
});
