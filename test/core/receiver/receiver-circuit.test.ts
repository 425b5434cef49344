import { describe, expect, it } from "vitest";
import type { Job, JobOutcome } from "../../../src/core/lifecycle/job.js";
import { passCircuit } from "../../../src/core/receiver/pass-circuit.js";
import {
  admitPost,
  type CircuitPolicy,
  type CircuitState,
  MIN_PROBE_DELAY_MS,
  probeDelayMs,
  RECEIVER_UP,
  recordPost,
  releaseProbe,
  underPolicy,
} from "../../../src/core/receiver/receiver-circuit.js";

const POLICY: CircuitPolicy = {
  failuresToOpen: 3,
  initialDelayMs: 1_000,
  maxDelayMs: 600_000,
  probeTimeoutMs: 25_000,
  target: "https://receiver.example",
};
const NOW = 1_000_000;
const FAILED = { answered: false } as const;
const ANSWERED = { answered: true } as const;

const job: Job = {
  message: { id: "m1", channel: "webhook", receivedAt: 0, message: { senderId: "s", conversationId: "c" } },
  replies: [{ id: "r1", sequence: 1, body: "{}" }],
  delivered: 0,
  attempts: 2,
};
const down = (overrides: Partial<NonNullable<CircuitState["down"]>> = {}): CircuitState => ({
  failures: 3,
  down: { since: NOW - 5_000, probeAt: NOW, probes: 0, ...overrides },
});

describe("receiver circuit", () => {
  it("goes down at the third unanswered POST in a row, and an answer in between starts the count again", () => {
    let state = RECEIVER_UP;
    state = recordPost(state, FAILED, NOW, POLICY, false).state;
    state = recordPost(state, FAILED, NOW, POLICY, false).state;
    expect(state).toEqual({ failures: 2, target: POLICY.target });
    state = recordPost(state, ANSWERED, NOW, POLICY, false).state;
    expect(state).toEqual(RECEIVER_UP);
    state = recordPost(state, FAILED, NOW, POLICY, false).state;
    state = recordPost(state, FAILED, NOW, POLICY, false).state;
    const third = recordPost(state, FAILED, NOW, POLICY, false);
    expect(third.change).toBe("down");
    expect(third.state.down).toEqual({ since: NOW, probes: 0, probeAt: NOW + 1_000 });
  });

  it("never goes down with failuresToOpen 0", () => {
    let state = RECEIVER_UP;
    for (let i = 0; i < 50; i += 1)
      state = recordPost(state, FAILED, NOW, { ...POLICY, failuresToOpen: 0 }, false).state;
    expect(state.down).toBeUndefined();
  });

  it.each([
    ["up: every run posts", RECEIVER_UP, NOW, true, "send"],
    ["down, the probe due and none out: this run probes", down(), NOW, true, "probe"],
    ["down, the probe not due yet", down({ probeAt: NOW + 1 }), NOW, true, "wait"],
    ["down, a probe out", down({ probingUntil: NOW + 10 }), NOW, true, "wait"],
    ["down, the probe out has expired", down({ probingUntil: NOW - 1 }), NOW, true, "probe"],
    ["down, the run must ask its brain first", down(), NOW, false, "wait"],
  ] as const)("admits: %s", (_name, state, now, hasReplies, admission) => {
    expect(admitPost(state, now, POLICY, hasReplies).admission).toBe(admission);
  });

  it("marks the probe out, so that one probe at a time posts", () => {
    const first = admitPost(down(), NOW, POLICY);
    expect(first.state.down?.probingUntil).toBe(NOW + 25_000);
    expect(admitPost(first.state, NOW + 1, POLICY).admission).toBe("wait");
  });

  it("schedules probes on the retry schedule's ceiling, capped, with Retry-After setting the time", () => {
    expect([0, 1, 2, 9, 10, 11].map((probes) => probeDelayMs(probes, POLICY))).toEqual([
      1_000, 2_000, 4_000, 512_000, 600_000, 600_000,
    ]);
    expect(probeDelayMs(3, POLICY, 30_000)).toBe(30_000);
    expect(probeDelayMs(3, POLICY, 3_600_000)).toBe(600_000);
    expect(probeDelayMs(0, { ...POLICY, initialDelayMs: 0 })).toBe(MIN_PROBE_DELAY_MS);
  });

  it("moves the next probe on after a failed probe, and comes up at the first answer", () => {
    const probing = admitPost(down(), NOW, POLICY).state;
    const failed = recordPost(probing, { answered: false, retryAfterMs: 7_000 }, NOW, POLICY, true);
    expect(failed.state.down).toEqual({ since: NOW - 5_000, probes: 1, probeAt: NOW + 7_000 });
    expect(recordPost(failed.state, ANSWERED, NOW, POLICY, true)).toEqual({ state: RECEIVER_UP, change: "up" });
  });

  it("leaves the schedule alone for a POST that was under way when the receiver went down", () => {
    const state = down({ probingUntil: NOW + 10 });
    expect(recordPost(state, FAILED, NOW, POLICY, false).state).toBe(state);
  });

  it("frees the probe of a run that posted nothing", () => {
    const probing = admitPost(down(), NOW, POLICY).state;
    expect(releaseProbe(probing)).toEqual(down());
    expect(admitPost(releaseProbe(probing), NOW, POLICY).admission).toBe("probe");
  });
});

describe("passCircuit", () => {
  const retry = { kind: "retry", job: { ...job, attempts: 3 }, delayMs: 500 } as const;
  const unanswered: JobOutcome = { kind: "unanswered", job, until: NOW + 86_400_000, verdict: retry };
  const context = (state: CircuitState, admission: "send" | "probe" | "wait" = "send") => ({
    state,
    policy: POLICY,
    admission,
    now: NOW,
  });

  it.each([
    ["an unanswered POST while the receiver stays up is the job's own failure", RECEIVER_UP, "send", "retry", 3],
    ["the unanswered POST that takes the receiver down costs no attempt", { failures: 2 }, "send", "wait", 2],
    ["an unanswered POST while it is down costs no attempt", down(), "send", "wait", 2],
    ["the probe's failure costs no attempt", down(), "probe", "wait", 2],
  ] as const)("%s", (_name, state, admission, kind, attempts) => {
    const ruling = passCircuit(unanswered, context(state, admission));
    expect(ruling.outcome.kind).toBe(kind);
    expect(ruling.outcome.job.attempts).toBe(attempts);
  });

  it("dead-letters through the verdict while up (attempts exhausted), and holds instead once down", () => {
    const dead: JobOutcome = {
      ...unanswered,
      verdict: { kind: "dead", job, error: { code: "delivery_failed", message: "503", retryable: true } },
    };
    expect(passCircuit(dead, context(RECEIVER_UP)).outcome.kind).toBe("dead");
    expect(passCircuit(dead, context({ failures: 2 })).outcome.kind).toBe("wait");
  });

  it("brings the receiver up when the probe is answered, and leaves a healthy one as it was", () => {
    const done: JobOutcome = { kind: "done", job, answered: true };
    expect(passCircuit(done, context(down(), "probe"))).toMatchObject({ state: RECEIVER_UP, change: "up" });
    expect(passCircuit(done, context(RECEIVER_UP)).state).toBe(RECEIVER_UP);
  });

  it("frees the probe when the probing run posted nothing (its brain failed)", () => {
    const probing = admitPost(down(), NOW, POLICY).state;
    const { replies: _replies, ...asking } = job;
    const brainFailed: JobOutcome = { kind: "retry", job: asking, delayMs: 100 };
    expect(passCircuit(brainFailed, context(probing, "probe")).state.down?.probingUntil).toBeUndefined();
  });
});

describe("underPolicy", () => {
  const counted: CircuitState = { failures: 2, target: POLICY.target };
  const downAt = (target: string): CircuitState => ({ ...down(), target });

  it.each([
    ["the same receiver: as it was", downAt(POLICY.target), POLICY, undefined, true],
    ["another origin, down: afresh and up", downAt("https://backup.example"), POLICY, "up", false],
    ["another origin, counting: afresh", { ...counted, target: "https://backup.example" }, POLICY, undefined, false],
    ["turned off while down: afresh and up", downAt(POLICY.target), { ...POLICY, failuresToOpen: 0 }, "up", false],
    ["nothing counted yet: as it was", RECEIVER_UP, { ...POLICY, failuresToOpen: 0 }, undefined, true],
  ] as const)("%s", (_name, state, policy, change, same) => {
    const step = underPolicy(state, policy);
    expect(step.change).toBe(change);
    expect(step.state === state).toBe(same);
    if (!same) expect(step.state).toEqual(RECEIVER_UP);
  });
});
