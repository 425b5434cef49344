/**
 * A lane woken by the receiver circuit while its head still runs (its hold and the probe's answer
 * settle in the same turn, as the delivery thread's batched outcomes do) starts again at once, and
 * the timer of that hold goes: kept, it made the lane's next run look not running, and fired
 * later to run its head before the head's own backoff (a retry due in a minute ran at once).
 */
import { describe, expect, it } from "vitest";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import type { Job, JobOutcome } from "../../../src/core/lifecycle/job.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";
import { HAND_POLICY, HAND_REPLY, message, realWait } from "./receiver-circuit-harness.js";

const POLICY = HAND_POLICY;
const reply = HAND_REPLY;

describe("a lane woken while its head runs", () => {
  for (const gap of [0, 2]) {
    it(`keeps the head's backoff (P released ${gap} microtasks after A)`, async () => {
      const { logger } = createLogSink("error");
      const runs: { id: string; admission: string; at: number }[] = [];
      let releaseA: ((o: JobOutcome) => void) | undefined;
      let releaseP: ((o: JobOutcome) => void) | undefined;
      let aSecond: (() => void) | undefined;
      const queue = createJobQueue({
        capacity: 10,
        logger,
        receiver: { channel: "webhook", policy: () => POLICY },
        run: async (job, _progress, admission) => {
          const id = job.message.id;
          runs.push({ id, admission, at: Date.now() });
          const withReplies: Job = { ...job, replies: [reply] };
          if (id === "P" && admission === "send")
            return {
              kind: "unanswered",
              job: withReplies,
              until: Date.now() + 86_400_000,
              verdict: { kind: "retry", job: { ...withReplies, attempts: 1 }, delayMs: 10 },
            };
          if (id === "P") return new Promise<JobOutcome>((resolve) => (releaseP = resolve));
          // A: first run (receiver down) waits; it ends in the same turn as P's probe.
          const aRuns = runs.filter((r) => r.id === "A").length;
          if (aRuns === 1) return new Promise<JobOutcome>((resolve) => (releaseA = resolve));
          if (aRuns === 2) {
            // Its second run: still running until the test lets it go; then a retry in 60 s.
            await new Promise<void>((resolve) => (aSecond = resolve));
            return { kind: "retry", job: { ...withReplies, attempts: 1 }, delayMs: 60_000 };
          }
          return { kind: "done", job: withReplies, answered: true };
        },
      });
      try {
        await queue.enqueue(message("P", "p"));
        await waitFor(() => (queue.receiver()?.up === false ? true : undefined), 5_000, "down");
        await queue.enqueue(message("A", "a"));
        await waitFor(
          () => (releaseA !== undefined && releaseP !== undefined ? true : undefined),
          5_000,
          "A and probe",
        );
        const until = Date.now() + 300;
        releaseA?.({ kind: "wait", job: jobOf("A", "a"), until });
        for (let i = 0; i < gap; i += 1) await Promise.resolve();
        releaseP?.({ kind: "done", job: { ...jobOf("P", "p"), replies: [reply] }, answered: true });
        await waitFor(() => (aSecond !== undefined ? true : undefined), 5_000, "A's second run");
        // While A's second run is under way, it is running.
        const runningDuringSecondRun = queue.isRunning(conversationKey("webhook", "a"), "A");
        aSecond?.();
        // A retry in 60 s: nothing of A runs when the hold's timer would have fired, nor just after.
        await realWait(Math.max(0, until - Date.now()) + 300);
        expect(runs.filter((r) => r.id === "A").map((r) => r.admission)).toEqual(["wait", "send"]);
        expect(runningDuringSecondRun).toBe(true);
      } finally {
        await queue.drain(0);
      }
    });
  }
});

function jobOf(id: string, conversationId: string): Job {
  return { message: message(id, conversationId), delivered: 0, attempts: 0, replies: [reply] };
}
