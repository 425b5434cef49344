/**
 * A probe whose message has several replies: its first answered POST is the receiver's
 * recovery, told to the circuit at once, not when its last reply is delivered. Before, the
 * other conversations waited the whole run out, and a run longer than the probe's time limit
 * let a second probe go out beside it.
 */
import { describe, expect, it } from "vitest";
import { type Job, type JobOutcome, newJob } from "../../../src/core/lifecycle/job.js";
import { createJobQueue } from "../../../src/node/queue/job-queue.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";
import { HAND_POLICY, message } from "./receiver-circuit-harness.js";

const TWO_REPLIES = [
  { id: "r1", sequence: 1, body: "{}" },
  { id: "r2", sequence: 2, body: "{}" },
];

describe("a probe of a message with several replies", () => {
  it("brings the receiver up at its first answered POST, while its later replies are still on their way", async () => {
    const { logger } = createLogSink("error");
    const runs: string[] = [];
    let probing = 0;
    let mostProbing = 0;
    let releaseProbe: (() => void) | undefined;
    const queue = createJobQueue({
      capacity: 10,
      logger,
      // A probe's time limit shorter than its run: a second probe must not go out beside it.
      receiver: { channel: "webhook", policy: () => ({ ...HAND_POLICY, probeTimeoutMs: 200 }) },
      run: async (job, hooks, admission): Promise<JobOutcome> => {
        const id = job.message.id;
        runs.push(`${id}:${admission}`);
        const answered: Job = { ...newJob(job.message), replies: TWO_REPLIES };
        if (admission === "wait") return { kind: "wait", job: answered, until: Date.now() + 86_400_000 };
        if (admission === "probe") {
          probing += 1;
          mostProbing = Math.max(mostProbing, probing);
          // The brain's replies stored, the first POST answered and its progress stored; the
          // second POST is slow to be answered.
          await hooks.save(answered);
          await hooks.save({ ...answered, delivered: 1 });
          await new Promise<void>((resolve) => {
            releaseProbe = resolve;
          });
          probing -= 1;
          return { kind: "done", job: { ...answered, delivered: 2 }, answered: true };
        }
        if (runs.some((run) => run.endsWith(":probe"))) return { kind: "done", job: answered, answered: true };
        return {
          kind: "unanswered",
          job: answered,
          until: Date.now() + 86_400_000,
          verdict: { kind: "retry", job: { ...answered, attempts: 1 }, delayMs: 10 },
        };
      },
    });
    try {
      await queue.enqueue(message("A", "a"));
      await waitFor(() => (queue.receiver()?.up === false ? true : undefined), 5_000, "the receiver down");
      await queue.enqueue(message("B", "b"));
      await waitFor(() => (runs.includes("B:wait") ? true : undefined), 5_000, "B held");
      await waitFor(() => (releaseProbe === undefined ? undefined : true), 5_000, "A's probe under way");
      await waitFor(() => (runs.includes("B:send") ? true : undefined), 5_000, "B posting while A's probe runs");
      expect(queue.receiver()?.up).toBe(true);
      expect(mostProbing).toBe(1);
      releaseProbe?.();
      await waitFor(() => (queue.size === 0 ? true : undefined), 5_000, "every job done");
      expect(runs.filter((run) => run.endsWith(":probe"))).toEqual(["A:probe"]);
    } finally {
      releaseProbe?.();
      await queue.drain(0);
    }
  });
});
